// The fixed order in which mutators run. Order matters where one mutator's
// result feeds another (GPU limits decide whether /dev/shm is needed), and a
// fixed order keeps patches deterministic.
#include "mutators/mutator.h"
#include "mutators/pool_tolerations.h"

namespace aiadmit {

const std::vector<std::unique_ptr<const Mutator>>& allMutators() {
  static const std::vector<std::unique_ptr<const Mutator>> mutators = [] {
    std::vector<std::unique_ptr<const Mutator>> list;
    list.push_back(std::make_unique<PoolTolerationsMutator>());
    return list;
  }();
  return mutators;
}

}  // namespace aiadmit
