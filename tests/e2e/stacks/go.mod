// The projects whose CRDs the suite applies beside ../shared/crds
// (scripts/build-stacks extracts the files stacks.conf names from each
// module's zip). Nothing here is built: the modules are only downloaded.
module aiadmit.dev/tests/e2e/stacks

go 1.26.8

require (
	github.com/kserve/kserve v0.20.0
	github.com/kubeflow/spark-operator/v2 v2.5.0
	github.com/kubeflow/trainer/v2 v2.3.0
	knative.dev/serving v0.51.0
)
