// podload creates Pods through the API server as fast as a few concurrent
// clients can and reports the latency of each create as the client sees it.
// bench/e2e-latency.sh runs it once in a namespace that aiadmit is called for
// and once in one it is not, so the difference is what aiadmit adds.
//
//	podload --kubeconfig FILE --namespace NS [--count 1000] [--clients 4]
//	        [--gpu] [--workload CLASS] [--scheduler-name NAME] [--timeout 10m]
//	        [-o text|json] [--samples FILE]
//
// Every goroutine shares one client (one keep-alive HTTP/2 connection to the
// API server), with client-go's rate limiter off: its default of 5 requests a
// second would otherwise be what is measured. Pods are made with
// generateName and ask for a scheduler that no scheduler serves, so that
// kube-scheduler never works on them while the benchmark runs. A create that
// fails counts as an error; the report says how many and why, and the exit
// status is 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The annotation aiadmit stamps on every workload it classifies: a created
// Pod that carries it went through aiadmit's /mutate.
const classAnnotation = "aiadmit.dev/class"

// The annotation a developer declares a class with (--workload): aiadmit's
// profiles exported as native admission policies act only on declared Pods.
const workloadAnnotation = "aiadmit.dev/workload"

// The GPU pool of the shipped profiles (and of the suite's GPU Nodes): a
// created Pod that tolerates its taint and selects its label was placed on
// it by whichever webhook was called (aiadmit, or a policy engine making the
// same change).
const (
	poolLabel, poolLabelValue = "accelerator", "nvidia"
	poolTaint, poolTaintValue = "accelerator", "gpu"
)

// The number of distinct error messages the report keeps.
const maxErrorSamples = 5

type options struct {
	kubeconfig    string
	namespace     string
	count         int
	clients       int
	gpu           bool
	workload      string
	schedulerName string
	timeout       time.Duration
	output        string
	samples       string
}

type latencies struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

type report struct {
	Namespace     string    `json:"namespace"`
	Count         int       `json:"count"`
	Created       int       `json:"created"`
	Errors        int       `json:"errors"`
	ErrorSamples  []string  `json:"errorSamples"`
	Stamped       int       `json:"stampedByAiadmit"`
	Placed        int       `json:"placedOnGpuPool"`
	Clients       int       `json:"clients"`
	GPU           bool      `json:"gpu"`
	Seconds       float64   `json:"seconds"`
	Throughput    float64   `json:"throughputPerSecond"`
	LatencyMillis latencies `json:"latencyMilliseconds"`
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	flags := flag.NewFlagSet("podload", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the cluster (default $KUBECONFIG)")
	flags.StringVar(&o.namespace, "namespace", "", "namespace to create the Pods in (must exist)")
	flags.IntVar(&o.count, "count", 1000, "Pods to create")
	flags.IntVar(&o.clients, "clients", 4, "concurrent goroutines creating Pods")
	flags.BoolVar(&o.gpu, "gpu", false, "the Pods ask for nvidia.com/gpu: 1 (so that aiadmit's matchConditions send them)")
	flags.StringVar(&o.workload, "workload", "", "declare this class on the Pods (annotation "+workloadAnnotation+"); none by default")
	flags.StringVar(&o.schedulerName, "scheduler-name", "aiadmit-bench-unscheduled",
		"spec.schedulerName of the Pods; by default one no scheduler serves, so they stay Pending untouched")
	flags.DurationVar(&o.timeout, "timeout", 10*time.Minute, "bound on the whole run; a create still waiting then is an error")
	flags.StringVar(&o.output, "o", "text", "output format: text or json")
	flags.StringVar(&o.samples, "samples", "", "file to write each successful create's latency to, in milliseconds, one a line")
	if err := flags.Parse(args); err != nil {
		return o, err
	}
	switch {
	case flags.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", flags.Arg(0))
	case o.kubeconfig == "":
		return o, errors.New("--kubeconfig is required (or KUBECONFIG)")
	case o.namespace == "":
		return o, errors.New("--namespace is required")
	case o.count < 1:
		return o, errors.New("--count must be at least 1")
	case o.clients < 1:
		return o, errors.New("--clients must be at least 1")
	case o.output != "text" && o.output != "json":
		return o, fmt.Errorf("-o must be text or json, not %q", o.output)
	case o.timeout <= 0:
		return o, errors.New("--timeout must be positive")
	}
	return o, nil
}

func newClient(o options) (*kubernetes.Clientset, error) {
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", o.kubeconfig, err)
	}
	// A negative QPS turns client-go's token bucket off (0 would mean its
	// default, 5 a second).
	config.QPS = -1
	config.Burst = 0
	config.UserAgent = "aiadmit-podload"
	// aiadmit answers with warnings (what it injected); printing 1,000 of
	// them would be the slowest part of the run.
	config.WarningHandler = rest.NoWarnings{}
	return kubernetes.NewForConfig(config)
}

func podTemplate(o options) *corev1.Pod {
	grace := int64(0)
	container := corev1.Container{Name: "worker", Image: "registry.k8s.io/pause:3.10"}
	if o.gpu {
		container.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	}
	var annotations map[string]string
	if o.workload != "" {
		annotations = map[string]string{workloadAnnotation: o.workload}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "podload-",
			Labels:       map[string]string{"app.kubernetes.io/name": "aiadmit-podload"},
			Annotations:  annotations,
		},
		Spec: corev1.PodSpec{
			SchedulerName:                 o.schedulerName,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			Containers:                    []corev1.Container{container},
		},
	}
}

type result struct {
	mu           sync.Mutex
	samples      []time.Duration
	errors       int
	errorSamples []string
	stamped      int
	placed       int
}

func (r *result) add(d time.Duration, created *corev1.Pod, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errors++
		message := err.Error()
		if len(message) > 300 {
			message = message[:300] + "..."
		}
		for _, seen := range r.errorSamples {
			if seen == message {
				return
			}
		}
		if len(r.errorSamples) < maxErrorSamples {
			r.errorSamples = append(r.errorSamples, message)
		}
		return
	}
	r.samples = append(r.samples, d)
	if _, ok := created.Annotations[classAnnotation]; ok {
		r.stamped++
	}
	if placedOnGpuPool(created) {
		r.placed++
	}
}

// placedOnGpuPool: the Pod selects the pool's label and tolerates its taint.
func placedOnGpuPool(pod *corev1.Pod) bool {
	if pod.Spec.NodeSelector[poolLabel] != poolLabelValue {
		return false
	}
	for _, t := range pod.Spec.Tolerations {
		effect := t.Effect == "" || t.Effect == corev1.TaintEffectNoSchedule
		if t.Operator == corev1.TolerationOpExists && effect && (t.Key == "" || t.Key == poolTaint) {
			return true
		}
		equal := t.Operator == "" || t.Operator == corev1.TolerationOpEqual
		if equal && effect && t.Key == poolTaint && t.Value == poolTaintValue {
			return true
		}
	}
	return false
}

// load creates o.count Pods from o.clients goroutines sharing client.
func load(ctx context.Context, client kubernetes.Interface, o options) (*result, time.Duration) {
	var next atomic.Int64
	var wg sync.WaitGroup
	r := &result{samples: make([]time.Duration, 0, o.count)}
	pods := client.CoreV1().Pods(o.namespace)
	started := time.Now()
	for range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pod := podTemplate(o)
			for next.Add(1) <= int64(o.count) {
				begin := time.Now()
				created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
				r.add(time.Since(begin), created, err)
			}
		}()
	}
	wg.Wait()
	return r, time.Since(started)
}

func millis(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// percentile by nearest rank over sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(p/100*float64(len(sorted))+0.999999999) - 1
	rank = max(0, min(rank, len(sorted)-1))
	return sorted[rank]
}

func summarize(o options, r *result, wall time.Duration) report {
	rep := report{
		Namespace: o.namespace, Count: o.count, Created: len(r.samples), Errors: r.errors,
		ErrorSamples: r.errorSamples, Stamped: r.stamped, Placed: r.placed, Clients: o.clients, GPU: o.gpu,
		Seconds: wall.Seconds(),
	}
	if rep.ErrorSamples == nil {
		rep.ErrorSamples = []string{}
	}
	if wall > 0 {
		rep.Throughput = float64(len(r.samples)) / wall.Seconds()
	}
	if len(r.samples) == 0 {
		return rep
	}
	sorted := append([]time.Duration(nil), r.samples...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	var total time.Duration
	for _, d := range sorted {
		total += d
	}
	rep.LatencyMillis = latencies{
		Mean: millis(total) / float64(len(sorted)),
		P50:  millis(percentile(sorted, 50)),
		P90:  millis(percentile(sorted, 90)),
		P99:  millis(percentile(sorted, 99)),
		Max:  millis(sorted[len(sorted)-1]),
	}
	return rep
}

func writeSamples(path string, samples []time.Duration) error {
	var b strings.Builder
	for _, d := range samples {
		fmt.Fprintf(&b, "%.3f\n", millis(d))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func printText(w io.Writer, rep report) {
	l := rep.LatencyMillis
	fmt.Fprintf(w, "namespace %s: %d creates from %d clients in %.2f s, %d errors, %d stamped by aiadmit, %d placed on the GPU pool\n",
		rep.Namespace, rep.Count, rep.Clients, rep.Seconds, rep.Errors, rep.Stamped, rep.Placed)
	fmt.Fprintf(w, "throughput %.1f creates/s; latency ms: mean %.2f p50 %.2f p90 %.2f p99 %.2f max %.2f\n",
		rep.Throughput, l.Mean, l.P50, l.P90, l.P99, l.Max)
	for _, message := range rep.ErrorSamples {
		fmt.Fprintf(w, "error: %s\n", message)
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "podload: %v\n", err)
		return 2
	}
	client, err := newClient(o)
	if err != nil {
		fmt.Fprintf(stderr, "podload: %v\n", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	// The namespace must be there: otherwise every create fails alike and
	// the run says nothing about latency.
	if _, err := client.CoreV1().Namespaces().Get(ctx, o.namespace, metav1.GetOptions{}); err != nil {
		fmt.Fprintf(stderr, "podload: namespace %s: %v\n", o.namespace, err)
		return 2
	}
	r, wall := load(ctx, client, o)
	rep := summarize(o, r, wall)
	if o.samples != "" {
		if err := writeSamples(o.samples, r.samples); err != nil {
			fmt.Fprintf(stderr, "podload: %v\n", err)
			return 2
		}
	}
	if o.output == "json" {
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		if err := encoder.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "podload: %v\n", err)
			return 2
		}
	} else {
		printText(stdout, rep)
	}
	if rep.Errors > 0 {
		return 1
	}
	return 0
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
