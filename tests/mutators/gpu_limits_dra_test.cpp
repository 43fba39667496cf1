// A workload that gets its GPUs through DRA claims: gpu-limits adds no
// extended-resource GPU beside them (nor beside a claim it cannot resolve,
// which may hold them), and the pool's tolerations and node selector still
// aim it at the GPU pool. Each run's patch is applied by kubectl and the
// mutators run again for no change.
#include "tests/support/mutator_harness.h"

namespace aiadmit {
namespace {

using namespace testing;

const MutatorDeclaration& kGpuLimits = registeredMutator("gpu-limits");
const MutatorDeclaration& kTolerations = registeredMutator("pool-tolerations");
const MutatorDeclaration& kPlacement = registeredMutator("pool-placement");
const std::vector<const MutatorDeclaration*> kMutators = {&kGpuLimits, &kTolerations, &kPlacement};

const Profile& training() {
  return shippedProfile("training");
}

std::shared_ptr<const ClusterView> viewWith(const std::string& templateYaml) {
  ClusterView::Builder builder;
  ClaimObject claim;
  std::string error;
  EXPECT_TRUE(readClaimObject(*manifest(templateYaml), claim, &error)) << error;
  builder.add(ClaimTemplateRecord{claim.namespaceName, claim.name, std::move(claim.spec)});
  builder.markListed(ClusterKind::ResourceClaimTemplate);
  return std::move(builder).build();
}

const char* kGpuTemplate = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {deviceClassName: gpu.nvidia.com, count: 2}
)";

const char* kNicTemplate = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: nic
        exactly: {deviceClassName: rdma.mellanox.com}
)";

// A declared training Job whose container uses the claim made of two-gpus.
const char* kClaimingJob = R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  annotations: {aiadmit.dev/workload: training}
spec:
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - {name: gpus, resourceClaimTemplateName: two-gpus}
      containers:
      - name: trainer
        image: trainer:1
        resources:
          claims: [{name: gpus}]
)";

bool anyContains(const std::vector<std::string>& lines, std::string_view text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(GpuLimitsDra, AGpuClaimGetsNoExtendedResourceButThePool) {
  const auto cluster = viewWith(kGpuTemplate);
  const MutationRun run =
      runMutators(kMutators, *manifest(kClaimingJob), training(), "default", cluster.get());
  EXPECT_FALSE(anyContains(run.changes, "nvidia.com/gpu")) << run.patch();
  EXPECT_EQ(run.patch().find("nvidia.com~1gpu"), std::string::npos) << run.patch();
  EXPECT_TRUE(anyContains(run.changes, "added toleration accelerator=gpu:NoSchedule"));
  EXPECT_TRUE(anyContains(run.changes, "added node selector accelerator=nvidia"));
  expectAppliedAndIdempotent(kMutators, run, training(), "default", cluster.get());
  const CommandResult schema = validateSchemas({toJson(*run.after)});
  EXPECT_EQ(schema.exitCode, 0) << schema.out << schema.err;
}

TEST(GpuLimitsDra, NoDefaultBesideAClaimThatCannotBeResolved) {
  // No view: the template is unknown, and may hold the GPUs.
  const MutationRun run = runMutators(kMutators, *manifest(kClaimingJob), training());
  EXPECT_FALSE(run.changed) << run.patch();
  expectAppliedAndIdempotent(kMutators, run, training());
}

TEST(GpuLimitsDra, AClaimOfNoGpuLeavesTheDefaultToApply) {
  const auto cluster = viewWith(kNicTemplate);
  const MutationRun run =
      runMutators(kMutators, *manifest(kClaimingJob), training(), "default", cluster.get());
  EXPECT_TRUE(anyContains(run.changes, "added limit nvidia.com/gpu=1 to container trainer"))
      << run.patch();
  expectAppliedAndIdempotent(kMutators, run, training(), "default", cluster.get());
}

}  // namespace
}  // namespace aiadmit
