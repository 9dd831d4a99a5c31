package kube_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// TestChart renders the chart for each value set in testdata/values and
// checks what that set asks for.
func TestChart(t *testing.T) {
	tests := []struct {
		values string
		kinds  []string
		check  func(t *testing.T, r rendered)
	}{
		{
			values: "pvc.yaml",
			kinds:  []string{"ConfigMap", "Deployment", "PodDisruptionBudget", "Service"},
			check: func(t *testing.T, r rendered) {
				a := r.main.Args
				if !slices.Equal(a[:2], []string{"serve", "/mnt/models"}) || arg(a, "--name") != "demo-svc" ||
					arg(a, "--host") != "0.0.0.0" || arg(a, "--port") != "8080" || arg(a, "--config") != "/etc/svc/svc.yml" {
					t.Errorf("args %q", a)
				}
				for _, f := range []string{"--workers", "--provider", "--grpc-port", "--access-log"} {
					if slices.Contains(a, f) {
						t.Errorf("args %q hold %s, which the defaults leave out", a, f)
					}
				}
				if r.main.Image != "svc:0.1.0" {
					t.Errorf("image %q", r.main.Image)
				}
				claim := volume(t, r.deploy, "model").PersistentVolumeClaim
				if claim == nil || claim.ClaimName != "models" || !claim.ReadOnly {
					t.Errorf("model volume %+v, want the read-only claim models", claim)
				}
				if m := mount(t, r.main, "model"); m.MountPath != "/mnt/models" || !m.ReadOnly || m.SubPath != "" {
					t.Errorf("model mount %+v", m)
				}
				if len(r.deploy.Spec.Template.Spec.InitContainers) != 0 {
					t.Errorf("init containers with a PVC")
				}
				if *r.deploy.Spec.Replicas != 1 {
					t.Errorf("replicas %d", *r.deploy.Spec.Replicas)
				}
				if _, ok := r.main.Resources.Limits["nvidia.com/gpu"]; ok {
					t.Errorf("a GPU without a GPU provider")
				}
				ann := r.deploy.Spec.Template.Annotations
				if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != "8080" || ann["prometheus.io/path"] != "/metrics" {
					t.Errorf("pod annotations %v", ann)
				}
				if sc := r.main.SecurityContext; sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
					t.Errorf("root filesystem is writable")
				}
				if m := mount(t, r.main, "tmp"); m.MountPath != "/tmp" {
					t.Errorf("tmp mount %+v", m)
				}
				if len(r.svc.Spec.Ports) != 1 || r.svc.Spec.Ports[0].Port != 8080 {
					t.Errorf("service ports %+v", r.svc.Spec.Ports)
				}
				// SIGTERM: not ready, accepting for the drain delay, then
				// the grace period; the kubelet's SIGKILL comes after both.
				cfg := checkConfig(t, find[*corev1.ConfigMap](t, r.objs, "ConfigMap").Data["svc.yml"])
				stopping := cfg.Serve.DrainDelay.Std() + cfg.Serve.ShutdownGrace.Std()
				if cfg.Serve.DrainDelay.Std() != 5*time.Second ||
					time.Duration(*r.deploy.Spec.Template.Spec.TerminationGracePeriodSeconds)*time.Second <= stopping {
					t.Errorf("drain delay %v, grace %v, terminationGracePeriodSeconds %d", cfg.Serve.DrainDelay,
						cfg.Serve.ShutdownGrace, *r.deploy.Spec.Template.Spec.TerminationGracePeriodSeconds)
				}
			},
		},
		{
			values: "pvc-subpath-config.yaml",
			kinds:  []string{"ConfigMap", "Deployment", "Service"},
			check: func(t *testing.T, r rendered) {
				a := r.main.Args
				if arg(a, "--name") != "iris" || arg(a, "--workers") != "2" || arg(a, "--access-log") != "errors" || a[len(a)-1] != "--verbose" {
					t.Errorf("args %q", a)
				}
				if m := mount(t, r.main, "model"); m.SubPath != "iris/v3" {
					t.Errorf("model mount %+v", m)
				}
				if _, ok := r.deploy.Spec.Template.Annotations["prometheus.io/scrape"]; ok {
					t.Errorf("prometheus annotations although turned off")
				}
				cfg := checkConfig(t, find[*corev1.ConfigMap](t, r.objs, "ConfigMap").Data["svc.yml"])
				if cfg.Serve.ShutdownGrace.Std() != 20*time.Second || cfg.Serve.DrainDelay.Std() != 8*time.Second || cfg.Runtime.Timeout.Std() != 30*time.Second ||
					int64(cfg.Runtime.MemoryLimit) != 1<<30 || !cfg.Batching.Enabled || cfg.Batching.MaxBatchSize != 32 ||
					int64(cfg.Limits.MaxBodyBytes) != 16<<20 || !slices.Equal(cfg.Access.CORS.AllowedOrigins, []string{"https://app.example.com"}) {
					t.Errorf("svc.yml read back as %+v", cfg)
				}
			},
		},
		{
			values: "hub.yaml",
			kinds:  []string{"ConfigMap", "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Secret", "Service", "ServiceMonitor"},
			check: func(t *testing.T, r rendered) {
				spec := r.deploy.Spec.Template.Spec
				if len(spec.InitContainers) != 1 {
					t.Fatalf("%d init containers, want the pull", len(spec.InitContainers))
				}
				pull := spec.InitContainers[0]
				if !slices.Equal(pull.Args, []string{"pull", "onnx-community/paddleocr-cls", "--file", "onnx/model.onnx"}) || pull.Image != r.main.Image {
					t.Errorf("pull init container %q %q", pull.Image, pull.Args)
				}
				for _, c := range []corev1.Container{pull, r.main} {
					if e := env(c, "SVC_HOME"); e == nil || e.Value != "/var/lib/svc" {
						t.Errorf("%s: SVC_HOME %+v", c.Name, e)
					}
					if m := mount(t, c, "model"); m.MountPath != "/var/lib/svc" {
						t.Errorf("%s: model mount %+v", c.Name, m)
					}
				}
				if e := env(pull, "HF_TOKEN"); e == nil || e.ValueFrom.SecretKeyRef.Name != "hf-token" || e.ValueFrom.SecretKeyRef.Key != "HF_TOKEN" {
					t.Errorf("HF_TOKEN %+v", e)
				}
				if r.main.Args[1] != "onnx-community/paddleocr-cls" {
					t.Errorf("serve args %q", r.main.Args)
				}
				if v := volume(t, r.deploy, "model"); v.EmptyDir == nil || v.EmptyDir.SizeLimit.Cmp(resource.MustParse("10Gi")) != 0 {
					t.Errorf("model volume %+v", v)
				}
				secret := find[*corev1.Secret](t, r.objs, "Secret")
				if secret.StringData["api-keys"] != "key-one,key-two" || secret.StringData["metrics-key"] != "key-one" {
					t.Errorf("secret %v", secret.StringData)
				}
				if e := env(r.main, "SVC_API_KEYS"); e == nil || e.ValueFrom.SecretKeyRef.Name != secret.Name || e.ValueFrom.SecretKeyRef.Key != "api-keys" {
					t.Errorf("SVC_API_KEYS %+v", e)
				}
				cfg := checkConfig(t, find[*corev1.ConfigMap](t, r.objs, "ConfigMap").Data["svc.yml"])
				if cfg.Access.APIKeysEnv != "SVC_API_KEYS" {
					t.Errorf("access.api_keys_env %q", cfg.Access.APIKeysEnv)
				}
				sm := find[*monitoringv1.ServiceMonitor](t, r.objs, "ServiceMonitor")
				ep := sm.Spec.Endpoints[0]
				if ep.Path != "/metrics" || ep.Authorization == nil || ep.Authorization.Credentials.Name != secret.Name ||
					ep.Authorization.Credentials.Key != "metrics-key" || sm.Labels["release"] != "prometheus" {
					t.Errorf("ServiceMonitor %+v", sm)
				}
				hpa := find[*autoscalingv2.HorizontalPodAutoscaler](t, r.objs, "HorizontalPodAutoscaler")
				if hpa.Spec.MaxReplicas != 6 || len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU ||
					*hpa.Spec.Metrics[0].Resource.Target.AverageUtilization != 70 {
					t.Errorf("HPA %+v", hpa.Spec)
				}
			},
		},
		{
			values: "storageuri-gpu.yaml",
			kinds:  []string{"ConfigMap", "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Service"},
			check: func(t *testing.T, r rendered) {
				spec := r.deploy.Spec.Template.Spec
				if len(spec.InitContainers) != 1 || !slices.Equal(spec.InitContainers[0].Args, []string{"s3://models/iris/model.onnx", "/mnt/models"}) {
					t.Fatalf("init containers %+v", spec.InitContainers)
				}
				if m := mount(t, spec.InitContainers[0], "model"); m.MountPath != "/mnt/models" || m.ReadOnly {
					t.Errorf("storage initializer mount %+v", m)
				}
				if r.main.Image != "registry.example.com/svc:0.1.0-cuda" || arg(r.main.Args, "--provider") != "cuda" || arg(r.main.Args, "--grpc-port") != "9000" {
					t.Errorf("container %q %q", r.main.Image, r.main.Args)
				}
				if q := r.main.Resources.Limits["nvidia.com/gpu"]; q.Cmp(resource.MustParse("2")) != 0 {
					t.Errorf("GPU limit %v", r.main.Resources.Limits)
				}
				if q := r.main.Resources.Limits[corev1.ResourceMemory]; q.Cmp(resource.MustParse("2Gi")) != 0 {
					t.Errorf("memory limit lost: %v", r.main.Resources.Limits)
				}
				if !slices.ContainsFunc(r.main.Ports, func(p corev1.ContainerPort) bool { return p.Name == "grpc" && p.ContainerPort == 9000 }) {
					t.Errorf("container ports %+v", r.main.Ports)
				}
				if !slices.ContainsFunc(r.svc.Spec.Ports, func(p corev1.ServicePort) bool {
					return p.Name == "grpc" && p.Port == 9000 && p.AppProtocol != nil && *p.AppProtocol == "grpc"
				}) {
					t.Errorf("service ports %+v", r.svc.Spec.Ports)
				}
				if e := env(r.main, "SVC_API_KEYS"); e == nil || e.ValueFrom.SecretKeyRef.Name != "svc-keys" {
					t.Errorf("SVC_API_KEYS %+v", e)
				}
				hpa := find[*autoscalingv2.HorizontalPodAutoscaler](t, r.objs, "HorizontalPodAutoscaler")
				if len(hpa.Spec.Metrics) != 1 || hpa.Spec.Metrics[0].Type != autoscalingv2.PodsMetricSourceType ||
					hpa.Spec.Metrics[0].Pods.Metric.Name != "svc_inference_in_flight" ||
					hpa.Spec.Metrics[0].Pods.Target.AverageValue.Cmp(resource.MustParse("4")) != 0 {
					t.Errorf("HPA metrics %+v", hpa.Spec.Metrics)
				}
				if len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "nvidia.com/gpu" {
					t.Errorf("tolerations %+v", spec.Tolerations)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.values, ".yaml"), func(t *testing.T) {
			r := render(t, tt.values)
			if got := kinds(r.objs); !slices.Equal(got, tt.kinds) {
				t.Errorf("objects %v, want %v", got, tt.kinds)
			}
			tt.check(t, r)
		})
	}
}

// TestChartRejects checks that value sets that cannot work fail to render
// with a message naming the value.
func TestChartRejects(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		want string
	}{
		{"pvc without a claim", nil, "model.pvc.claimName is required"},
		{"hub without a repo", []string{"model.source=hub"}, "model.hub.repo is required"},
		{"storage URI without a URI", []string{"model.source=storageUri"}, "model.storageUri is required"},
		{"unknown source", []string{"model.source=s3"}, `model.source must be pvc, hub or storageUri, got "s3"`},
		{"API keys without keys", []string{"model.pvc.claimName=m", "apiKeys.enabled=true"}, "apiKeys.enabled needs apiKeys.keys or apiKeys.existingSecret"},
		{"HPA without a metric", []string{"model.pvc.claimName=m", "autoscaling.enabled=true", "autoscaling.targetCPUUtilizationPercentage=0"}, "autoscaling.enabled needs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"template", "demo", chartDir}
			for _, s := range tt.set {
				args = append(args, "--set", s)
			}
			out, err := runErr(helm(t), args...)
			if err == nil || !strings.Contains(out, tt.want) {
				t.Fatalf("helm template %v: err %v, want an error with %q:\n%s", tt.set, err, tt.want, out)
			}
		})
	}
}

func volume(t *testing.T, d *appsv1.Deployment, name string) corev1.Volume {
	t.Helper()
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %q", name)
	return corev1.Volume{}
}

func mount(t *testing.T, c corev1.Container, name string) corev1.VolumeMount {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("container %s does not mount %q", c.Name, name)
	return corev1.VolumeMount{}
}
