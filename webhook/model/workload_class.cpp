#include "webhook/model/workload_class.h"

#include "webhook/codec/enum_table.h"

namespace aiadmit {

namespace {

constexpr EnumEntry<WorkloadClass> kClassNames[] = {{WorkloadClass::Training, "training"},
                                                    {WorkloadClass::Batch, "batch"},
                                                    {WorkloadClass::Realtime, "realtime"}};

}  // namespace

std::string_view className(WorkloadClass workloadClass) {
  return valueIn(kClassNames, workloadClass, "none");
}

std::optional<WorkloadClass> parseClass(std::string_view text) {
  return keyIn(kClassNames, text);
}

}  // namespace aiadmit
