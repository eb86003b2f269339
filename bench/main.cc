#include "tracebench/cli.h"

int main(int argc, char** argv) { return tracebench::cli_main(argc, argv); }
