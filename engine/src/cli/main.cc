// `attune`: see docs/cli.md. Everything happens in cli::Main.
#include "cli/cli.h"

int main(int argc, char** argv) { return attune::cli::Main(argc, argv); }
