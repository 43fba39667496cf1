// Command render turns an operator's install, as its own kustomization
// renders it, into what scripts/e2e-cluster applies when that operator runs
// out of cluster beside the end-to-end API server:
//
//	kubectl kustomize MODULE/config/default | render -out DIR \
//	    -webhook-url https://127.0.0.1:PORT -ca-bundle CA.crt \
//	    -webhook-port PORT -cert-dir DIR -probe-address ADDR
//
// It writes DIR/crds.yaml (the CustomResourceDefinitions, a conversion
// webhook's Service reference replaced as the webhooks' are), DIR/rbac.yaml (the
// Namespace, ServiceAccounts, Roles, ClusterRoles and their bindings),
// DIR/webhooks.yaml (the webhook configurations, their Service references
// replaced by the URL and CA bundle given, rules and selectors untouched),
// DIR/config.yaml (the manager's Configuration from its ConfigMap, with
// leader election and metrics off, the ports given, and internal certificate
// management off unless -keep-cert-rotation says the manager needs it),
// DIR/configmaps.yaml (the other ConfigMaps, which some managers read from
// the API) and DIR/operator.env (the manager's namespace, ServiceAccount,
// arguments and environment). The Deployment, Services, Secrets and
// APIServices are left out: the manager runs as a process here, with no
// Service in front of it. An install of several Deployments (Kyverno's) names
// the manager's with -deployment; its first container is the manager.
package main

import (
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

type object = map[string]any

type options struct {
	out, webhookURL, caBundleFile, certDir, probeAddress, deployment string
	webhookPort                                                      int
	keepCertRotation                                                 bool
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "", "directory to write into")
	flag.StringVar(&o.webhookURL, "webhook-url", "", "base URL of the manager's webhook server")
	flag.StringVar(&o.caBundleFile, "ca-bundle", "", "PEM file of the CA that signed the webhook's certificate")
	flag.IntVar(&o.webhookPort, "webhook-port", 0, "port of the manager's webhook server")
	flag.StringVar(&o.certDir, "cert-dir", "", "directory holding the webhook's tls.crt and tls.key")
	flag.StringVar(&o.probeAddress, "probe-address", "", "address of the manager's health probes")
	flag.StringVar(&o.deployment, "deployment", "",
		"the Deployment of the manager, when the install has several (default: each, container \"manager\")")
	flag.BoolVar(&o.keepCertRotation, "keep-cert-rotation", false,
		"leave the manager's internal certificate management on (it then keeps the Secret it is given)")
	flag.Parse()
	if err := run(o, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(o options, in io.Reader) error {
	if o.out == "" {
		return fmt.Errorf("-out is required")
	}
	input, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	caBundle := ""
	if o.caBundleFile != "" {
		pem, err := os.ReadFile(o.caBundleFile)
		if err != nil {
			return err
		}
		caBundle = base64.StdEncoding.EncodeToString(pem)
	}
	parts := map[string][]object{}
	env := []string{}
	for _, document := range splitDocuments(input) {
		var item object
		if err := yaml.Unmarshal(document, &item); err != nil {
			return err
		}
		if item == nil {
			continue
		}
		switch kind, _ := item["kind"].(string); kind {
		case "CustomResourceDefinition":
			pointConversionAt(item, o.webhookURL, caBundle)
			parts["crds"] = append(parts["crds"], item)
		case "Namespace", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
			parts["rbac"] = append(parts["rbac"], item)
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			pointWebhooksAt(item, o.webhookURL, caBundle)
			parts["webhooks"] = append(parts["webhooks"], item)
		case "ConfigMap":
			config, ok := managerConfiguration(item)
			if !ok {
				parts["configmaps"] = append(parts["configmaps"], item)
				continue
			}
			if err := writeYAML(filepath.Join(o.out, "config.yaml"), outOfCluster(config, o)); err != nil {
				return err
			}
		case "Deployment":
			if o.deployment == "" || nameOf(item) == o.deployment {
				env = append(env, deploymentEnv(item, o.deployment != "")...)
			}
		}
	}
	for _, name := range []string{"crds", "rbac", "webhooks", "configmaps"} {
		if err := writeDocuments(filepath.Join(o.out, name+".yaml"), parts[name]); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(o.out, "operator.env"), []byte(strings.Join(env, "\n")+"\n"), 0o644)
}

func splitDocuments(input []byte) [][]byte {
	var documents [][]byte
	for _, part := range bytes.Split(input, []byte("\n---")) {
		if trimmed := bytes.TrimSpace(part); len(trimmed) > 0 {
			documents = append(documents, trimmed)
		}
	}
	return documents
}

// pointWebhooksAt replaces each webhook's Service reference by URL and the
// Service's path, and sets the CA bundle; everything else stays as shipped.
func pointWebhooksAt(configuration object, url, caBundle string) {
	webhooks, _ := configuration["webhooks"].([]any)
	for _, entry := range webhooks {
		webhook, _ := entry.(object)
		if webhook == nil || webhook["clientConfig"] == nil {
			continue
		}
		webhook["clientConfig"] = clientConfigFor(webhook["clientConfig"], url, caBundle)
	}
	// A certificate controller's annotations ask for injection this run does
	// not make.
	if metadata, ok := configuration["metadata"].(object); ok {
		delete(metadata, "annotations")
	}
}

// pointConversionAt does for a CRD's conversion webhook what pointWebhooksAt
// does for admission webhooks.
func pointConversionAt(crd object, url, caBundle string) {
	spec, _ := crd["spec"].(object)
	conversion, _ := spec["conversion"].(object)
	webhook, _ := conversion["webhook"].(object)
	if webhook == nil {
		return
	}
	webhook["clientConfig"] = clientConfigFor(webhook["clientConfig"], url, caBundle)
	if metadata, ok := crd["metadata"].(object); ok {
		if annotations, ok := metadata["annotations"].(object); ok {
			delete(annotations, "cert-manager.io/inject-ca-from")
		}
	}
}

// clientConfigFor is a Service reference's clientConfig pointed at url with
// the Service's path.
func clientConfigFor(clientConfig any, url, caBundle string) object {
	path := ""
	if config, ok := clientConfig.(object); ok {
		if service, ok := config["service"].(object); ok {
			path, _ = service["path"].(string)
		}
	}
	return object{"url": url + path, "caBundle": caBundle}
}

// managerConfiguration is the manager's own Configuration document, when the
// ConfigMap holds one.
func managerConfiguration(configMap object) (object, bool) {
	data, _ := configMap["data"].(object)
	for _, value := range data {
		text, _ := value.(string)
		var config object
		if yaml.Unmarshal([]byte(text), &config) != nil || config == nil {
			continue
		}
		if kind, _ := config["kind"].(string); kind == "Configuration" {
			return config, true
		}
	}
	return nil, false
}

// outOfCluster turns off what needs the in-cluster Deployment (leader
// election in its namespace, certificates for its Service) and the metrics
// (nothing scrapes them here, and their secure serving would want a
// certificate of its own), and sets the ports this run chose.
func outOfCluster(config object, o options) object {
	section := func(name string) object {
		value, ok := config[name].(object)
		if !ok {
			value = object{}
			config[name] = value
		}
		return value
	}
	section("leaderElection")["leaderElect"] = false
	section("internalCertManagement")["enable"] = o.keepCertRotation
	webhook := section("webhook")
	webhook["port"] = o.webhookPort
	webhook["host"] = "127.0.0.1"
	webhook["certDir"] = o.certDir
	section("health")["healthProbeBindAddress"] = o.probeAddress
	section("metrics")["bindAddress"] = "0"
	return config
}

func nameOf(item object) string {
	metadata, _ := item["metadata"].(object)
	name, _ := metadata["name"].(string)
	return name
}

// deploymentEnv names the manager's namespace, ServiceAccount, arguments and
// environment (one per line, as the Deployment gives them: env=NAME=VALUE
// for a literal value or the Pod's namespace; other references are the
// caller's to set). The manager is the container named "manager", or the
// first container when firstContainer.
func deploymentEnv(deployment object, firstContainer bool) []string {
	metadata, _ := deployment["metadata"].(object)
	namespace, _ := metadata["namespace"].(string)
	spec, _ := deployment["spec"].(object)
	template, _ := spec["template"].(object)
	podSpec, _ := template["spec"].(object)
	serviceAccount, _ := podSpec["serviceAccountName"].(string)
	env := []string{"namespace=" + namespace, "serviceAccount=" + serviceAccount}
	containers, _ := podSpec["containers"].([]any)
	for _, entry := range containers {
		container, _ := entry.(object)
		if name, _ := container["name"].(string); name != "manager" && len(containers) > 1 && !firstContainer {
			continue
		}
		args, _ := container["args"].([]any)
		for _, arg := range args {
			if text, ok := arg.(string); ok {
				env = append(env, "arg="+text)
			}
		}
		env = append(env, containerEnv(container, namespace)...)
		if firstContainer {
			break
		}
	}
	return env
}

func containerEnv(container object, namespace string) []string {
	var env []string
	variables, _ := container["env"].([]any)
	for _, entry := range variables {
		variable, _ := entry.(object)
		name, _ := variable["name"].(string)
		if value, ok := variable["value"].(string); ok {
			env = append(env, "env="+name+"="+value)
			continue
		}
		valueFrom, _ := variable["valueFrom"].(object)
		fieldRef, _ := valueFrom["fieldRef"].(object)
		if path, _ := fieldRef["fieldPath"].(string); path == "metadata.namespace" {
			env = append(env, "env="+name+"="+namespace)
		}
	}
	return env
}

func writeYAML(file string, value any) error {
	text, err := yaml.Marshal(value)
	if err != nil {
		return err
	}
	return os.WriteFile(file, text, 0o644)
}

func writeDocuments(file string, items []object) error {
	var buffer bytes.Buffer
	for _, item := range items {
		text, err := yaml.Marshal(item)
		if err != nil {
			return err
		}
		buffer.WriteString("---\n")
		buffer.Write(text)
	}
	return os.WriteFile(file, buffer.Bytes(), 0o644)
}
