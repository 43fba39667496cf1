// The defaults that CustomResourceDefinitions declare in their structural
// schemas (`default` under openAPIV3Schema), applied to a custom resource as
// kube-apiserver applies them when it decodes one, before any admission
// webhook sees it. `aiadmit check` starts from that object, so that what it
// prints is what the webhook answers in the cluster: a RayJob arrives with
// backoffLimit 0, a Volcano Job with maxRetry 3.
//
// The algorithm is the API server's (apiextensions-apiserver, package
// schema/defaulting): in an object, each property of the schema that has a
// default and is absent (or null where the schema does not allow null) gets a
// copy of the default; then every member with a schema (its property's, or
// additionalProperties') is walked, defaults just set included, so a default
// object gets the defaults of its own properties. Array elements are walked
// with the items schema, and a null element takes the items default. A
// property's default is only set where its parent object exists: nothing is
// created on the way. Null members that the schema does not allow and that
// have no default are dropped, as the API server drops them in the same
// decoding. Pruning of unknown fields is not done: a default with fields its
// schema lacks is refused by the API server when the CRD is created, and
// unknown fields of the object are left for strict field validation to
// refuse, as kubectl has the API server do.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "webhook/codec/json.h"

namespace aiadmit {

struct CrdDefaultLimits {
  // Schema levels (properties, items, additionalProperties) read from a CRD
  // and walked in an object; the deepest real CRD of ../shared/crds has
  // about twenty.
  size_t maxDepth = 64;
  // Schema nodes read into one set, over all its CRDs.
  size_t maxSchemaNodes = 2'000'000;
  // Values walked and copied from defaults in one object: a default can hold
  // lists and objects, and each element of a long list takes its items'
  // defaults, so the work is bounded by this, not by the object's size.
  size_t maxVisited = 1'000'000;
};

enum class DefaultingOutcome {
  NoSchema,      // no served version of a CRD in the set describes the object
  Applied,       // the object now holds its defaults (possibly none were missing)
  LimitReached,  // the walk went past a limit; the object is left as it was
};

struct DefaultingResult {
  DefaultingOutcome outcome = DefaultingOutcome::NoSchema;
  size_t defaultsSet = 0;   // members and elements that took a default
  size_t nullsDropped = 0;  // null members the schema does not allow
};

// An immutable set of the structural schemas of served CRD versions, keyed by
// group, version and kind.
class CrdDefaults {
 public:
  struct Schema;  // one version's schema, read into nodes (crd_defaults.cpp)

  class Builder {
   public:
    explicit Builder(CrdDefaultLimits limits = {});
    ~Builder();
    Builder(Builder&&) noexcept;
    Builder& operator=(Builder&&) noexcept;

    // Adds every served version of one apiextensions.k8s.io/v1
    // CustomResourceDefinition; a later CRD for the same group, version and
    // kind replaces an earlier one. False, with why in `error`, for a
    // document that is not such a CRD or whose schema cannot be read (too
    // deep, too large, not an object where a schema must be one).
    bool add(const JsonValue& crd, std::string* error);
    std::shared_ptr<const CrdDefaults> build() &&;

   private:
    std::unique_ptr<CrdDefaults> set_;
    size_t nodes_ = 0;
  };

  ~CrdDefaults();

  // Whether `document` is a CustomResourceDefinition of any apiextensions
  // version (what `add` refuses when it is not v1).
  static bool isCustomResourceDefinition(const JsonValue& document);
  // The CustomResourceDefinitions of a manifest document: the document
  // itself, or the items of a List (kubectl's `get crd -o yaml`), in order.
  static std::vector<const JsonValue*> definitionsIn(const JsonValue& document);

  // Applies to `object` the defaults of its apiVersion and kind, with
  // `allocator` (the object's document's) for the values it adds.
  DefaultingResult apply(JsonValue& object, JsonAllocator& allocator) const;

  bool describes(std::string_view group, std::string_view version, std::string_view kind) const;
  size_t size() const { return schemas_.size(); }
  const CrdDefaultLimits& limits() const { return limits_; }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // group, version, kind

  explicit CrdDefaults(CrdDefaultLimits limits) : limits_(limits) {}

  CrdDefaultLimits limits_;
  std::map<Key, std::shared_ptr<const Schema>> schemas_;
};

}  // namespace aiadmit
