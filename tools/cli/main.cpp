// The torchonnx command line (tools/cli/app.cpp): export, print, unconvertible, ops.
#include "cli.h"

int main(int argc, char** argv) {
  return torchonnx::cli::run(argc, argv);
}
