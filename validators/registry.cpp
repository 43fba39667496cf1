// Every rule the webhook checks, in rule order so that messages list
// violations deterministically.
#include "validators/gpu_quantity.h"
#include "validators/validator.h"

namespace aiadmit {

const std::vector<std::unique_ptr<const Validator>>& allValidators() {
  static const std::vector<std::unique_ptr<const Validator>> validators = [] {
    std::vector<std::unique_ptr<const Validator>> list;
    list.push_back(std::make_unique<GpuQuantityValidator>());
    return list;
  }();
  return validators;
}

}  // namespace aiadmit
