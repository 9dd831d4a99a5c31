{{/* The chart's name. */}}
{{- define "svc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of the release's objects. */}}
{{- define "svc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "svc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "svc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the pods. */}}
{{- define "svc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "svc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The served model name. */}}
{{- define "svc.modelName" -}}
{{- default (include "svc.fullname" .) .Values.model.name }}
{{- end }}

{{/* The name of the Secret holding the API keys. */}}
{{- define "svc.apiKeysSecret" -}}
{{- default (printf "%s-api-keys" (include "svc.fullname" .)) .Values.apiKeys.existingSecret }}
{{- end }}

{{/* The GPU resource name for the chosen provider, or nothing. */}}
{{- define "svc.gpuResource" -}}
{{- if .Values.server.provider }}
{{- get .Values.gpu.resourceNames .Values.server.provider }}
{{- end }}
{{- end }}

{{/* MODEL_NAME for svc serve. */}}
{{- define "svc.modelArg" -}}
{{- if eq .Values.model.source "hub" }}
{{- required "model.hub.repo is required with model.source=hub" .Values.model.hub.repo }}
{{- else if or (eq .Values.model.source "pvc") (eq .Values.model.source "storageUri") }}
{{- "/mnt/models" }}
{{- else }}
{{- fail (printf "model.source must be pvc, hub or storageUri, got %q" .Values.model.source) }}
{{- end }}
{{- end }}
