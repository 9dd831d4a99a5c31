package kube_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kservev1alpha1 "github.com/kserve/kserve/pkg/apis/serving/v1alpha1"
	kservev1beta1 "github.com/kserve/kserve/pkg/apis/serving/v1beta1"
	"github.com/kserve/kserve/pkg/constants"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TestKServe decodes build/kserve strictly and checks what KServe relies on:
// the container name, the ONNX format, the protocols, the model directory
// and name arguments, and the Prometheus annotations.
func TestKServe(t *testing.T) {
	tests := []struct {
		file, kind string
		protocols  []string
		grpc       bool
	}{
		{"servingruntime.yaml", "ServingRuntime", []string{"v2"}, false},
		{"clusterservingruntime.yaml", "ClusterServingRuntime", []string{"v2"}, false},
		{"servingruntime-grpc.yaml", "ServingRuntime", []string{"v2", "grpc-v2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			spec := runtimeSpec(t, decodeFile(t, tt.file), tt.kind)
			var protocols []string
			for _, p := range spec.ProtocolVersions {
				protocols = append(protocols, string(p))
			}
			if !slices.Equal(protocols, tt.protocols) {
				t.Errorf("protocolVersions %v, want %v", spec.ProtocolVersions, tt.protocols)
			}
			if len(spec.SupportedModelFormats) != 1 || spec.SupportedModelFormats[0].Name != "onnx" {
				t.Errorf("supportedModelFormats %+v", spec.SupportedModelFormats)
			}
			if spec.Annotations["prometheus.kserve.io/port"] != "8080" || spec.Annotations["prometheus.kserve.io/path"] != "/metrics" {
				t.Errorf("annotations %v", spec.Annotations)
			}
			if len(spec.Containers) != 1 || spec.Containers[0].Name != "kserve-container" {
				t.Fatalf("containers %+v, want one kserve-container", spec.Containers)
			}
			c := spec.Containers[0]
			want := []string{"serve", "/mnt/models", "--name={{.Name}}", "--host=0.0.0.0", "--port=8080"}
			if tt.grpc {
				want = append(want, "--grpc-port=9000")
			}
			if !slices.Equal(c.Args, want) {
				t.Errorf("args %q, want %q", c.Args, want)
			}
			if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 {
				t.Errorf("ports %+v", c.Ports)
			}
			if sc := c.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
				t.Errorf("runtime container may run as root")
			}
		})
	}
	t.Run("inferenceservice.yaml", func(t *testing.T) {
		isvc := find[*kservev1beta1.InferenceService](t, decodeFile(t, "inferenceservice.yaml"), "InferenceService")
		m := isvc.Spec.Predictor.Model
		if m == nil || m.ModelFormat.Name != "onnx" || m.Runtime == nil || *m.Runtime != "svc-onnx" ||
			m.ProtocolVersion == nil || *m.ProtocolVersion != constants.ProtocolV2 || m.StorageURI == nil {
			t.Fatalf("predictor model %+v", m)
		}
		runtime := find[*kservev1alpha1.ServingRuntime](t, decodeFile(t, "servingruntime.yaml"), "ServingRuntime")
		if runtime.Name != *m.Runtime {
			t.Errorf("the InferenceService names runtime %q; the ServingRuntime is %q", *m.Runtime, runtime.Name)
		}
	})
}

// runtimeSpec is the spec of the one ServingRuntime or
// ClusterServingRuntime (kind) in objs.
func runtimeSpec(t *testing.T, objs []object, kind string) kservev1alpha1.ServingRuntimeSpec {
	t.Helper()
	if kind == "ClusterServingRuntime" {
		return find[*kservev1alpha1.ClusterServingRuntime](t, objs, kind).Spec
	}
	return find[*kservev1alpha1.ServingRuntime](t, objs, kind).Spec
}

func decodeFile(t *testing.T, name string) []object {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "build", "kserve", name))
	if err != nil {
		t.Fatal(err)
	}
	return decodeAll(t, string(b))
}

// TestStrictDecoding checks that the decoding the manifest tests rely on
// fails on the mistakes it is there to catch.
func TestStrictDecoding(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"misspelt Deployment field", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  replica: 1\n", `unknown field "spec.replica"`},
		{"misspelt ServingRuntime field", "apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nmetadata: {name: a}\nspec:\n  protocolVersion: [v2]\n", `unknown field "spec.protocolVersion"`},
		{"misspelt InferenceService field", "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: a}\nspec:\n  predictor:\n    model:\n      modelFormat: {name: onnx}\n      storageURI: s3://m\n", `unknown field "spec.predictor.model.storageURI"`},
		{"duplicate key", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec:\n  type: ClusterIP\n  type: NodePort\n", `key "type" already set`},
		{"wrong type", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec:\n  ports: [{port: http}]\n", `cannot unmarshal string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(tt.doc), &tm); err != nil {
				t.Fatal(err)
			}
			v, err := newObject(tm.APIVersion, tm.Kind)
			if err != nil {
				t.Fatal(err)
			}
			err = decodeStrict([]byte(tt.doc), v)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}
