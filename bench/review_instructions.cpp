// The driver of bench/instructions.sh: answers each review REPEAT times per
// endpoint with callgrind collecting, and dumps the count of each review and
// endpoint on its own (CALLGRIND_DUMP_STATS_AT), so that start-up, loading
// the profiles and the first answer's one-time work (static tables) are not
// counted. Outside valgrind the requests are no-ops and it only answers.
//
// The script builds it against this tree and against a baseline revision's,
// where the engine's header lived at webhook/engine.h: it uses nothing but
// answerReview, the Engine and the benchmarks' profile loader, which both
// have.
//
//   review_instructions REPEAT REVIEW.json...
#include <valgrind/callgrind.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "bench/bench_inputs.h"
#if __has_include("webhook/engine/engine.h")
#include "webhook/engine/engine.h"
#else
#include "webhook/engine.h"
#endif

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string reviewName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = name.rfind(".json");
  return dot == std::string::npos ? name : name.substr(0, dot);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: review_instructions REPEAT REVIEW.json...\n";
    return 2;
  }
  const long repeat = std::strtol(argv[1], nullptr, 10);
  if (repeat <= 0) {
    std::cerr << "REPEAT must be a positive number\n";
    return 2;
  }
  const aiadmit::Engine engine(aiadmit::bench::profilesWithExtra(0));
  for (int i = 2; i < argc; ++i) {
    const std::string body = readFile(argv[i]);
    if (body.empty()) {
      std::cerr << "cannot read " << argv[i] << "\n";
      return 2;
    }
    for (const aiadmit::Endpoint endpoint :
         {aiadmit::Endpoint::Mutate, aiadmit::Endpoint::Validate}) {
      const char* endpointText = endpoint == aiadmit::Endpoint::Mutate ? "mutate" : "validate";
      // The first answer, not counted, pays for what is built once per process.
      const aiadmit::ReviewAnswer first = aiadmit::answerReview(engine, endpoint, body);
      size_t bytes = 0;
      CALLGRIND_TOGGLE_COLLECT;
      for (long n = 0; n < repeat; ++n) {
        bytes += aiadmit::answerReview(engine, endpoint, body).body.size();
      }
      CALLGRIND_TOGGLE_COLLECT;
      const std::string label = reviewName(argv[i]) + " " + endpointText;
      CALLGRIND_DUMP_STATS_AT(label.c_str());
      // What was answered, so that a table compares like with like.
      std::cout << label << " status=" << first.httpStatus
                << " decision=" << static_cast<int>(first.decision)
                << " bytes=" << bytes / static_cast<size_t>(repeat) << "\n";
    }
  }
  return 0;
}
