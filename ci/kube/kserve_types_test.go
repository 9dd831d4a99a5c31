package kube_test

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The KServe types the manifests in build/kserve use, mirroring
// github.com/kserve/kserve v0.17.0 pkg/apis/serving (v1alpha1
// ServingRuntime, ClusterServingRuntime; v1beta1 InferenceService) field by
// field and JSON name by JSON name, with the Kubernetes parts as the real
// k8s.io/api types. KServe's own packages cannot be compiled against
// k8s.io/api v0.37 (their controller-runtime and KEDA dependencies break),
// so they are mirrored here: a field that KServe does not have fails the
// strict decoding, as it would fail KServe's CRD schema.

// ServingRuntime is serving.kserve.io/v1alpha1 ServingRuntime (and, with
// another kind, ClusterServingRuntime).
type ServingRuntime struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ServingRuntimeSpec `json:"spec,omitempty"`
}

// ServingRuntimeSpec is v1alpha1.ServingRuntimeSpec without the ModelMesh
// and multi-node fields.
type ServingRuntimeSpec struct {
	SupportedModelFormats []SupportedModelFormat `json:"supportedModelFormats,omitempty"`
	MultiModel            *bool                  `json:"multiModel,omitempty"`
	Disabled              *bool                  `json:"disabled,omitempty"`
	ProtocolVersions      []string               `json:"protocolVersions,omitempty"`
	GrpcDataEndpoint      *string                `json:"grpcDataEndpoint,omitempty"`
	HTTPDataEndpoint      *string                `json:"httpDataEndpoint,omitempty"`
	// ServingRuntimePodSpec, inline in KServe.
	Containers       []corev1.Container            `json:"containers"`
	Volumes          []corev1.Volume               `json:"volumes,omitempty"`
	NodeSelector     map[string]string             `json:"nodeSelector,omitempty"`
	Affinity         *corev1.Affinity              `json:"affinity,omitempty"`
	Tolerations      []corev1.Toleration           `json:"tolerations,omitempty"`
	Labels           map[string]string             `json:"labels,omitempty"`
	Annotations      map[string]string             `json:"annotations,omitempty"`
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	HostIPC          bool                          `json:"hostIPC,omitempty"`
	SchedulerName    string                        `json:"schedulerName,omitempty"`
}

// SupportedModelFormat is v1alpha1.SupportedModelFormat.
type SupportedModelFormat struct {
	Name       string  `json:"name"`
	Version    *string `json:"version,omitempty"`
	AutoSelect *bool   `json:"autoSelect,omitempty"`
	Priority   *int32  `json:"priority,omitempty"`
}

// InferenceService is serving.kserve.io/v1beta1 InferenceService with the
// predictor only.
type InferenceService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              InferenceServiceSpec `json:"spec,omitempty"`
}

// InferenceServiceSpec is v1beta1.InferenceServiceSpec without explainer and
// transformer.
type InferenceServiceSpec struct {
	Predictor PredictorSpec `json:"predictor"`
}

// PredictorSpec is v1beta1.PredictorSpec with the model spec, the pod
// fields (KServe's PodSpec is corev1.PodSpec with optional containers) and
// the scaling fields of ComponentExtensionSpec.
type PredictorSpec struct {
	Model                *ModelSpec `json:"model,omitempty"`
	corev1.PodSpec       `json:",inline"`
	MinReplicas          *int32  `json:"minReplicas,omitempty"`
	MaxReplicas          int32   `json:"maxReplicas,omitempty"`
	ScaleTarget          *int32  `json:"scaleTarget,omitempty"`
	ScaleMetric          *string `json:"scaleMetric,omitempty"`
	ContainerConcurrency *int64  `json:"containerConcurrency,omitempty"`
	TimeoutSeconds       *int64  `json:"timeout,omitempty"`
}

// ModelSpec is v1beta1.ModelSpec.
type ModelSpec struct {
	ModelFormat     ModelFormat `json:"modelFormat"`
	Runtime         *string     `json:"runtime,omitempty"`
	StorageURI      *string     `json:"storageUri,omitempty"`
	RuntimeVersion  *string     `json:"runtimeVersion,omitempty"`
	ProtocolVersion *string     `json:"protocolVersion,omitempty"`
	// The container fields KServe inlines.
	corev1.Container `json:",inline"`
}

// ModelFormat is v1beta1.ModelFormat.
type ModelFormat struct {
	Name    string  `json:"name"`
	Version *string `json:"version,omitempty"`
}
