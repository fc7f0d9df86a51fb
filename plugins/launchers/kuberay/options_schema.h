// Copyright attune authors.
//
// The schema of the KubeRay launcher's `with:` options (JSON Schema subset, docs/plugins.md
// "Options"): declared in the plugin's descriptor so that `attune validate` checks a workflow
// without creating the plugin, and validated again by ParseKubeRayOptions (which then checks what
// the subset cannot say: label syntax, quantities, one volume source, cross-option rules).
#ifndef ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_OPTIONS_SCHEMA_H_
#define ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_OPTIONS_SCHEMA_H_

namespace attune::kuberay {

// docs/kuberay.md lists them.
extern const char kOptionsSchema[];

}  // namespace attune::kuberay

#endif  // ATTUNE_PLUGINS_LAUNCHERS_KUBERAY_OPTIONS_SCHEMA_H_
