#include "validators/gpu_quantity.h"

#include "webhook/quantity.h"

namespace aiadmit {

void GpuQuantityValidator::check(const ValidationContext& context,
                                 std::vector<Violation>& out) const {
  forEachContainer(context.view.spec, [&](const JsonValue& container, ContainerList list,
                                          size_t index) {
    const JsonValue* resources = member(&container, "resources");
    for (std::string_view section : {"limits", "requests"}) {
      const JsonValue* quantities = member(resources, section);
      if (!isObject(quantities)) continue;
      for (auto it = quantities->MemberBegin(); it != quantities->MemberEnd(); ++it) {
        const std::string_view resource{it->name.GetString(), it->name.GetStringLength()};
        if (!looksLikeAccelerator(resource)) continue;
        const auto quantity = Quantity::fromJson(it->value);
        if (quantity && !quantity->isNegative() && !quantity->isZero() &&
            quantity->isWholeNumber()) {
          continue;
        }
        const std::string text = quantityText(it->value);
        std::string problem = "\"" + std::string(resource) + "\" is " + text + ", ";
        problem += !quantity ? "which is not a quantity"
                   : quantity->isNegative() || quantity->isZero()
                       ? "but GPUs must be a positive whole number"
                       : "but GPUs cannot be split into fractions";
        out.push_back({AIA004,
                       containerFieldPath(context.kind, list, index) + ".resources." +
                           std::string(section),
                       problem, "ask for a whole number of GPUs, such as 1"});
      }
    }
  });
}

}  // namespace aiadmit
