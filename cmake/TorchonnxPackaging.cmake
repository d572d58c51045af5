# Installation and packaging of torchonnx (included by the root CMakeLists.txt once the targets
# torchonnx and torchonnx_cli exist).
#
#   cmake --install build --prefix P    installs
#     P/bin/torchonnx                                   the command line
#     P/lib/libtorchonnx.so.X.Y.Z (+ .so.X.Y, .so)      the library (SONAME libtorchonnx.so.X.Y)
#     P/include/torchonnx/*.h                           the public headers, version.h included
#     P/lib/cmake/torchonnx/                            find_package(torchonnx): torchonnx::torchonnx
#     P/lib/pkgconfig/torchonnx.pc                      pkg-config --cflags --libs torchonnx
#
# Only the targets named here are installed: examples, tests, benchmarks and fuzz targets have no
# install rules (tests/packaging/packaging_test.sh checks the installed file list).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The library: a SONAME that changes with the minor version while the major version is 0 (the C++
# ABI may change between 0.x releases), C++17 for its users.
set_target_properties(torchonnx PROPERTIES VERSION ${PROJECT_VERSION}
                      SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
target_compile_features(torchonnx PUBLIC cxx_std_${CMAKE_CXX_STANDARD})

# <torchonnx/version.h>: TORCHONNX_VERSION_MAJOR/MINOR/PATCH, TORCHONNX_VERSION, kVersion. The
# library's own sources reach it through the internal "version.h" (src/version.h.in).
configure_file(${PROJECT_SOURCE_DIR}/include/torchonnx/version.h.in
               ${PROJECT_BINARY_DIR}/include/torchonnx/version.h @ONLY)

# Only the public headers of include/torchonnx/ are installed: they include nothing of src/
# (<torchonnx/symbolic.h> gives custom symbolics handles of its own on the internal graph context),
# so the library's users, in the build tree as installed, get include/ and the generated
# version.h only. Targets of this project that need internal headers add src/ themselves (tests,
# bench, the CLI). The packaging test builds examples/custom_op against the installed tree, so a
# public header that reaches for an internal one fails it.
# (INTERFACE: the library's own sources reach version.h through generated/.)
target_include_directories(torchonnx INTERFACE $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)

# The installed CLI finds the installed library wherever the prefix is moved to.
file(RELATIVE_PATH _torchonnx_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
set_target_properties(torchonnx_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${_torchonnx_bin_to_lib}")

# (The installed include folder is the target's INSTALL_INTERFACE, set in the root CMakeLists.txt.)
install(TARGETS torchonnx EXPORT torchonnxTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS torchonnx_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/torchonnx
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/torchonnx/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/torchonnx)

# CMake package: find_package(torchonnx) + target_link_libraries(app PRIVATE torchonnx::torchonnx).
set(TORCHONNX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/torchonnx)
install(EXPORT torchonnxTargets NAMESPACE torchonnx:: DESTINATION ${TORCHONNX_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/torchonnxConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/packaging/torchonnxConfig.cmake
                              INSTALL_DESTINATION ${TORCHONNX_CMAKE_DIR})
# 0.x: a new minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/packaging/torchonnxConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/packaging/torchonnxConfig.cmake
              ${PROJECT_BINARY_DIR}/packaging/torchonnxConfigVersion.cmake
        DESTINATION ${TORCHONNX_CMAKE_DIR})

# pkg-config. libtorch ships no .pc file, so its include directories, ABI flag and libraries are
# written out here (from its CMake package). The prefix is found from the .pc file's own place
# (${pcfiledir}), so `cmake --install --prefix` anywhere gives a working file.
file(RELATIVE_PATH TORCHONNX_PC_PREFIX_FROM_PCDIR ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TORCHONNX_PC_PREFIX_FROM_PCDIR "${TORCHONNX_PC_PREFIX_FROM_PCDIR}")
set(TORCHONNX_PC_TORCH_CFLAGS "")
foreach(dir ${TORCH_INCLUDE_DIRS})
  string(APPEND TORCHONNX_PC_TORCH_CFLAGS " -I${dir}")
endforeach()
if(TORCH_CXX_FLAGS)
  string(APPEND TORCHONNX_PC_TORCH_CFLAGS " ${TORCH_CXX_FLAGS}")
endif()
get_filename_component(_torchonnx_torch_libdir ${TORCH_LIBRARY} DIRECTORY)
set(TORCHONNX_PC_TORCH_LIBS "-L${_torchonnx_torch_libdir} -ltorch -ltorch_cpu -lc10")
configure_file(${CMAKE_CURRENT_LIST_DIR}/torchonnx.pc.in ${PROJECT_BINARY_DIR}/packaging/torchonnx.pc
               @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/torchonnx.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
