// The translation unit that builds src/pch.h once for every target (torchonnx_pch).
