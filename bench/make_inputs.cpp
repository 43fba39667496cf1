// Writes the generated benchmark inputs (the 1 MiB Pod review) to a folder,
// for the HTTP benchmark. Run: build/bench/make_inputs OUT_DIR
#include <fstream>
#include <iostream>

#include "bench/bench_inputs.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_inputs OUT_DIR\n";
    return 2;
  }
  std::ofstream out(std::string(argv[1]) + "/big-pod.json", std::ios::binary);
  out << aiadmit::bench::bigPodReview(1 << 20);
  return out ? 0 : 1;
}
