// Package kube_test checks how svc runs on Kubernetes. container_test.go
// builds the container image and runs it with podman. The other tests check
// the manifests svc ships, without a cluster: the Helm chart build/helm/svc is linted (helm lint --strict) and
// rendered with the pinned helm for several value sets, and every object,
// like the KServe manifests in build/kserve, is decoded strictly (unknown or
// duplicate fields fail) into the real Kubernetes Go types; then the objects
// are checked against each other (selectors, named ports, volumes, the
// HPA's target) and the rendered svc.yml is loaded by svc's own
// configuration loader.
//
// This is a module of its own so that svc's go.mod does not carry the
// Kubernetes types; 'make test' runs it.
package kube_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kservev1alpha1 "github.com/kserve/kserve/pkg/apis/serving/v1alpha1"
	kservev1beta1 "github.com/kserve/kserve/pkg/apis/serving/v1beta1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/svc-dev/svc/core/config"
)

var repoRoot = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Join(wd, "..", "..")
}()

var chartDir = filepath.Join(repoRoot, "build", "helm", "svc")

// helm returns the pinned helm that 'make tools' installs.
func helm(t *testing.T) string {
	t.Helper()
	p := filepath.Join(repoRoot, "build", "tools", "helm")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("helm missing at %s: run 'make tools'", p)
	}
	return p
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// runErr runs a command and returns its combined output and error.
func runErr(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// object is one decoded manifest.
type object struct {
	kind, name string
	value      any
}

// newObject returns the typed value for a manifest's apiVersion and kind.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + " " + kind {
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, nil
	case "v1 Service":
		return &corev1.Service{}, nil
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1 Secret":
		return &corev1.Secret{}, nil
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}, nil
	case "monitoring.coreos.com/v1 ServiceMonitor":
		return &monitoringv1.ServiceMonitor{}, nil
	case "serving.kserve.io/v1alpha1 ServingRuntime":
		return &kservev1alpha1.ServingRuntime{}, nil
	case "serving.kserve.io/v1alpha1 ClusterServingRuntime":
		return &kservev1alpha1.ClusterServingRuntime{}, nil
	case "serving.kserve.io/v1beta1 InferenceService":
		return &kservev1beta1.InferenceService{}, nil
	}
	return nil, fmt.Errorf("unexpected object %s %s", apiVersion, kind)
}

// decodeAll splits a YAML stream and decodes every document strictly.
func decodeAll(t *testing.T, stream string) []object {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	var objs []object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("split YAML: %v", err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatalf("not a Kubernetes object: %v\n%s", err, doc)
		}
		v, err := newObject(tm.APIVersion, tm.Kind)
		if err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if err := decodeStrict(doc, v); err != nil {
			t.Fatalf("%s does not decode strictly into %T: %v\n%s", tm.Kind, v, err, doc)
		}
		name := v.(metav1.Object).GetName()
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			t.Errorf("%s name %q: %s", tm.Kind, name, msg)
		}
		objs = append(objs, object{kind: tm.Kind, name: name, value: v})
	}
	return objs
}

// decodeStrict decodes a YAML document as the API server does
// (sigs.k8s.io/json: case-sensitive field names), failing on unknown and
// duplicate fields.
func decodeStrict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

func stripComments(doc []byte) []byte {
	var out []byte
	for line := range bytes.Lines(doc) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line...)
		}
	}
	return out
}

// find returns the only object of kind, failing when there is not exactly one.
func find[T any](t *testing.T, objs []object, kind string) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if o.kind == kind {
			found = append(found, o.value.(T))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d %s objects, want 1", len(found), kind)
	}
	return found[0]
}

func kinds(objs []object) []string {
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.kind)
	}
	slices.Sort(ks)
	return ks
}

// rendered is a chart rendered with one value set.
type rendered struct {
	objs   []object
	deploy *appsv1.Deployment
	svc    *corev1.Service
	main   corev1.Container
}

func render(t *testing.T, values string) rendered {
	t.Helper()
	h := helm(t)
	valuesFile := filepath.Join("testdata", "values", values)
	out := run(t, h, "lint", "--strict", chartDir, "-f", valuesFile)
	if !strings.Contains(out, "0 chart(s) failed") {
		t.Fatalf("helm lint --strict:\n%s", out)
	}
	stream := run(t, h, "template", "demo", chartDir, "-f", valuesFile, "--namespace", "ml")
	r := rendered{objs: decodeAll(t, stream)}
	r.deploy = find[*appsv1.Deployment](t, r.objs, "Deployment")
	r.svc = find[*corev1.Service](t, r.objs, "Service")
	if n := len(r.deploy.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%d containers, want 1", n)
	}
	r.main = r.deploy.Spec.Template.Spec.Containers[0]
	checkConsistent(t, r)
	return r
}

// checkConsistent checks what a cluster would check across objects.
func checkConsistent(t *testing.T, r rendered) {
	t.Helper()
	pod := r.deploy.Spec.Template
	sel, err := metav1.LabelSelectorAsSelector(r.deploy.Spec.Selector)
	if err != nil {
		t.Fatalf("Deployment selector: %v", err)
	}
	if !sel.Matches(labelSet(pod.Labels)) {
		t.Errorf("Deployment selector %v does not match the pod labels %v", sel, pod.Labels)
	}
	for k, v := range r.svc.Spec.Selector {
		if pod.Labels[k] != v {
			t.Errorf("Service selector %s=%s does not match the pod labels %v", k, v, pod.Labels)
		}
	}
	ports := map[string]int32{}
	for _, p := range r.main.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for _, p := range r.svc.Spec.Ports {
		if _, ok := ports[p.TargetPort.StrVal]; !ok {
			t.Errorf("Service port %s targets %q, not a container port (%v)", p.Name, p.TargetPort.StrVal, ports)
		}
	}
	probes := map[string]*corev1.Probe{"startup": r.main.StartupProbe, "liveness": r.main.LivenessProbe, "readiness": r.main.ReadinessProbe}
	wantPath := map[string]string{"startup": "/v2/health/live", "liveness": "/v2/health/live", "readiness": "/v2/health/ready"}
	for name, p := range probes {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("no %s HTTP probe", name)
			continue
		}
		if p.HTTPGet.Path != wantPath[name] || p.HTTPGet.Port.StrVal != "http" {
			t.Errorf("%s probe %s on %q, want %s on http", name, p.HTTPGet.Path, p.HTTPGet.Port.StrVal, wantPath[name])
		}
	}
	volumes := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = true
	}
	for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				t.Errorf("container %s mounts %q, which is not a volume", c.Name, m.Name)
			}
		}
		if sc := c.SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s may escalate privileges", c.Name)
		}
	}
	if psc := pod.Spec.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("pod does not run as non-root")
	}
	for _, o := range r.objs {
		switch v := o.value.(type) {
		case *autoscalingv2.HorizontalPodAutoscaler:
			if ref := v.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != r.deploy.Name || ref.APIVersion != "apps/v1" {
				t.Errorf("HPA targets %+v, not the Deployment %s", ref, r.deploy.Name)
			}
			if r.deploy.Spec.Replicas != nil {
				t.Errorf("Deployment sets replicas although the HPA owns them")
			}
		case *policyv1.PodDisruptionBudget:
			s, err := metav1.LabelSelectorAsSelector(v.Spec.Selector)
			if err != nil || !s.Matches(labelSet(pod.Labels)) {
				t.Errorf("PDB selector %v does not match the pods (%v)", v.Spec.Selector, err)
			}
		case *monitoringv1.ServiceMonitor:
			for k, val := range v.Spec.Selector.MatchLabels {
				if r.svc.Labels[k] != val {
					t.Errorf("ServiceMonitor selects %s=%s; the Service has %v", k, val, r.svc.Labels)
				}
			}
			for _, ep := range v.Spec.Endpoints {
				if !slices.ContainsFunc(r.svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
					t.Errorf("ServiceMonitor port %q is not a Service port", ep.Port)
				}
			}
		case *corev1.ConfigMap:
			checkConfig(t, v.Data["svc.yml"])
		}
	}
}

// checkConfig loads the rendered svc.yml with svc's own loader (strict:
// unknown keys fail) and validates it.
func checkConfig(t *testing.T, data string) config.Config {
	t.Helper()
	file := filepath.Join(t.TempDir(), "svc.yml")
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file, true)
	if err != nil {
		t.Fatalf("svc.yml from the ConfigMap: %v\n%s", err, data)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("svc.yml from the ConfigMap: %v\n%s", err, data)
	}
	return cfg
}

type labelSet map[string]string

func (l labelSet) Has(k string) bool              { _, ok := l[k]; return ok }
func (l labelSet) Get(k string) string            { return l[k] }
func (l labelSet) Lookup(k string) (string, bool) { v, ok := l[k]; return v, ok }

// arg returns the value after flag in args, or "".
func arg(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}
