// Writes the generated benchmark inputs (the 1 MiB Pod review, and a 2.9 MiB
// one: the largest review serve's default body limit, the API server's own
// 3 MiB request limit, takes) to a folder, for the HTTP benchmark.
// Run: build/bench/make_inputs OUT_DIR
#include <fstream>
#include <iostream>

#include "bench/bench_inputs.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_inputs OUT_DIR\n";
    return 2;
  }
  std::ofstream big(std::string(argv[1]) + "/big-pod.json", std::ios::binary);
  big << aiadmit::bench::bigPodReview(1 << 20);
  std::ofstream huge(std::string(argv[1]) + "/huge-pod.json", std::ios::binary);
  huge << aiadmit::bench::bigPodReview(static_cast<size_t>(2.9 * (1 << 20)));
  return big && huge ? 0 : 1;
}
