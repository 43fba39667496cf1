{{/*
The chart renders the files of manifests/ and profiles/ that it carries in
files/ (copies that tests/install/helm_chart_test.cpp holds equal to the
originals), with what kustomize does to them: the base's namespace and label,
and each overlay's or component's change where a value selects it.
*/}}

{{/* aiadmit's namespace, as manifests/base/kustomization.yaml sets it. */}}
{{- define "aiadmit.namespace" -}}aiadmit-system{{- end }}

{{/*
The objects of a carried file, (list $ "manifests/base/x.yaml"), as a JSON
list: fromJsonArray (include "aiadmit.documents" ...).
*/}}
{{- define "aiadmit.documents" -}}
{{- $root := index . 0 -}}
{{- $path := printf "files/%s" (index . 1) -}}
{{- $text := $root.Files.Get $path -}}
{{- if not $text }}{{ fail (printf "the chart carries no %s" $path) }}{{ end -}}
{{- $objects := list -}}
{{- range splitList "\n---\n" $text -}}
{{- $object := fromYaml . -}}
{{- if hasKey $object "Error" }}{{ fail (printf "%s: %s" $path $object.Error) }}{{ end -}}
{{- if $object }}{{ $objects = append $objects $object }}{{ end -}}
{{- end -}}
{{- toJson $objects -}}
{{- end }}

{{/* Kinds without a namespace, which kustomize's namespace leaves alone. */}}
{{- define "aiadmit.clusterScoped" -}}
{{- list "Namespace" "ClusterRole" "ClusterRoleBinding" "PriorityClass" "MutatingWebhookConfiguration" "ValidatingWebhookConfiguration" | toJson -}}
{{- end }}

{{/*
One object as the base renders it: in aiadmit's namespace (a namespaced kind)
and labelled app.kubernetes.io/part-of (manifests/base/kustomization.yaml).
*/}}
{{- define "aiadmit.inBase" -}}
{{- $object := . -}}
{{- $metadata := $object.metadata -}}
{{- if not (has $object.kind (fromJsonArray (include "aiadmit.clusterScoped" nil))) -}}
{{- $_ := set $metadata "namespace" (include "aiadmit.namespace" nil) -}}
{{- end -}}
{{- $labels := $metadata.labels | default dict -}}
{{- $_ := set $labels "app.kubernetes.io/part-of" "aiadmit" -}}
{{- $_ := set $metadata "labels" $labels -}}
{{- end }}

{{/* An object, as one document of the chart's output. */}}
{{- define "aiadmit.emit" -}}
---
{{ toYaml . }}
{{ end }}

{{/* Whether aiadmit runs outside the cluster (local.address). */}}
{{- define "aiadmit.local" -}}{{ if .Values.local.address }}true{{ end }}{{- end }}

{{/*
The profile files: the team's own (profiles.files) or the shipped ones, each
with profiles.ruleActions set in every profile it holds.
*/}}
{{- define "aiadmit.profileFiles" -}}
{{- $files := dict -}}
{{- if .Values.profiles.files -}}
{{- $files = .Values.profiles.files -}}
{{- else -}}
{{- range $path, $_ := .Files.Glob "files/profiles/*.yaml" -}}
{{- $_ := set $files (base $path) ($.Files.Get $path) -}}
{{- end -}}
{{- end -}}
{{- $out := dict -}}
{{- range $name, $text := $files -}}
{{- $_ := set $out $name (include "aiadmit.withRuleActions" (list $.Values.profiles.ruleActions $text)) -}}
{{- end -}}
{{- toJson $out -}}
{{- end }}

{{/*
A profile file with rule actions set in each of its profiles; as it is when
there are none, so the shipped files reach the ConfigMap byte for byte.
*/}}
{{- define "aiadmit.withRuleActions" -}}
{{- $actions := index . 0 -}}
{{- $text := index . 1 -}}
{{- if not $actions -}}
{{- $text -}}
{{- else -}}
{{- $documents := list -}}
{{- range splitList "\n---\n" $text -}}
{{- $profile := fromYaml . -}}
{{- if hasKey $profile "Error" }}{{ fail (printf "a profile file: %s" $profile.Error) }}{{ end -}}
{{- if $profile -}}
{{- $spec := $profile.spec | default dict -}}
{{- $_ := set $spec "rules" (merge (deepCopy $actions) ($spec.rules | default dict)) -}}
{{- $_ := set $profile "spec" $spec -}}
{{- $documents = append $documents (toYaml $profile) -}}
{{- end -}}
{{- end -}}
{{- join "---\n" $documents -}}
{{- end -}}
{{- end }}

{{/*
The profiles ConfigMap's name: aiadmit-profiles and the hash of its contents,
as kustomize's configMapGenerator makes it (the first ten hex digits of the
SHA-256 of the JSON of kind, name and data, with 0 1 3 a e read as g h k m t),
so the Deployment rolls out when the profiles change. The name in the JSON is
empty, as kustomize's is: its hasher looks the name up under a key
"metadata/name", which no ConfigMap has.
*/}}
{{- define "aiadmit.profilesName" -}}
{{- $data := fromJson (include "aiadmit.profileFiles" .) -}}
{{- $hash := dict "data" $data "kind" "ConfigMap" "name" "" | toJson | sha256sum | trunc 10 -}}
{{- $hash = $hash | replace "0" "g" | replace "1" "h" | replace "3" "k" | replace "a" "m" | replace "e" "t" -}}
aiadmit-profiles-{{ $hash }}
{{- end }}
