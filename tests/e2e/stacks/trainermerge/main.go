// trainermerge prints the JobSet spec Kubeflow Trainer v2.3 builds from a
// training runtime and a TrainJob's spec.runtimePatches, merged as v2.3's
// TrainingRuntime.mergeRuntimePatches merges them (pkg/runtime/core in the
// module this one pins): each patch, in list order, is a strategic merge
// patch of the runtime's JobSetSpec with JobSet's own Go type, so
// replicated jobs merge by name, node selectors key by key, and a patch's
// tolerations replace the list before it. The end-to-end suite checks with it
// that the entry aiadmit writes keeps what the runtime and the other
// managers' patches give the trainer's Pods.
//
//	trainermerge RUNTIME_YAML TRAINJOB_JSON_OR_YAML
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/yaml"
)

// runtimeSpec is what TrainingRuntime and ClusterTrainingRuntime share.
type runtimeSpec struct {
	Spec trainer.TrainingRuntimeSpec `json:"spec"`
}

func read(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(data, into)
}

// merge is v2.3's mergeRuntimePatches, step for step.
func merge(spec jobsetv1alpha2.JobSetSpec, patches []trainer.RuntimePatch) (jobsetv1alpha2.JobSetSpec, error) {
	order := make(map[string]int, len(spec.ReplicatedJobs))
	for i, job := range spec.ReplicatedJobs {
		order[job.Name] = i
	}
	for _, runtimePatch := range patches {
		if runtimePatch.TrainingRuntimeSpec == nil || runtimePatch.TrainingRuntimeSpec.Template == nil ||
			runtimePatch.TrainingRuntimeSpec.Template.Spec == nil {
			continue
		}
		source, err := json.Marshal(spec)
		if err != nil {
			return spec, err
		}
		patch, err := json.Marshal(runtimePatch.TrainingRuntimeSpec.Template.Spec)
		if err != nil {
			return spec, err
		}
		merged, err := strategicpatch.StrategicMergePatch(source, patch, jobsetv1alpha2.JobSetSpec{})
		if err != nil {
			return spec, err
		}
		spec = jobsetv1alpha2.JobSetSpec{}
		if err := json.Unmarshal(merged, &spec); err != nil {
			return spec, err
		}
	}
	sort.SliceStable(spec.ReplicatedJobs, func(i, j int) bool {
		return order[spec.ReplicatedJobs[i].Name] < order[spec.ReplicatedJobs[j].Name]
	})
	return spec, nil
}

func run(runtimePath, trainJobPath string) error {
	var runtime runtimeSpec
	if err := read(runtimePath, &runtime); err != nil {
		return fmt.Errorf("%s: %w", runtimePath, err)
	}
	var trainJob trainer.TrainJob
	if err := read(trainJobPath, &trainJob); err != nil {
		return fmt.Errorf("%s: %w", trainJobPath, err)
	}
	merged, err := merge(runtime.Spec.Template.Spec, trainJob.Spec.RuntimePatches)
	if err != nil {
		return err
	}
	out, err := json.Marshal(merged)
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: trainermerge RUNTIME_YAML TRAINJOB_JSON_OR_YAML")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "trainermerge:", err)
		os.Exit(1)
	}
}
