// The CustomResourceDefinitions whose defaults `aiadmit check` applies to the
// custom resources of its input before the engine sees them, as the API
// server applies them before it calls the webhooks: those of --cluster, of
// each --crds file or directory, and those of the input itself, a later one
// replacing an earlier one of the same group, version and kind.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "webhook/cli/check_output.h"
#include "webhook/model/crd_defaults.h"

namespace aiadmit::check_cli {

// The files kubectl -f reads in a directory: .yaml, .yml and .json.
bool isManifestFile(const std::filesystem::path& path);

// Adds every CustomResourceDefinition of `path` (a file, or the manifest
// files of a directory, not its subdirectories) to `builder`; List objects
// stand for their items and other objects are passed over. False, with
// "FILE[:LINE]: why" in `error`, when the path cannot be read or parsed or a
// CRD in it cannot be used.
bool addCrdsFromPath(const std::string& path, CrdDefaults::Builder& builder, std::string& error);

// Adds the CustomResourceDefinitions among the objects of the input; those
// that cannot be used are input errors.
void addInputCrds(const std::vector<InputObject>& objects, CrdDefaults::Builder& builder,
                  std::vector<InputError>& errors);

// Applies the defaults of `crds` to each custom resource of `objects`. An
// object whose defaults reach past the set's limits becomes an input error
// and is left out, since its answer would be the webhook's for a different
// object.
void applyCrdDefaults(const CrdDefaults& crds, std::vector<InputObject>& objects,
                      std::vector<InputError>& errors);

}  // namespace aiadmit::check_cli
