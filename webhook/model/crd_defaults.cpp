#include "webhook/model/crd_defaults.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "webhook/codec/json_pointer.h"

namespace aiadmit {

// One version's structural schema as the defaulting walk needs it: nodes by
// index, each with its properties sorted by name for lookup, and the
// defaults kept in one array document of their own.
struct CrdDefaults::Schema {
  struct Node {
    std::vector<std::pair<std::string, uint32_t>> properties;  // sorted by name
    std::vector<uint32_t> defaultedProperties;  // positions in `properties` with a default
    std::optional<uint32_t> items;
    std::optional<uint32_t> additionalProperties;
    std::optional<uint32_t> defaultIndex;  // in `defaults`
    size_t defaultValues = 0;              // values a copy of the default holds
    bool nullable = false;
  };

  // Node 0 is every leaf with nothing to apply (no default, not nullable,
  // nothing under it), shared, since most of a schema is such leaves. It
  // still matters: a null there is dropped.
  std::vector<Node> nodes{Node{}};
  uint32_t root = 0;
  JsonDocument defaults;

  Schema() { defaults.SetArray(); }

  const Node* property(const Node& node, std::string_view name) const {
    const auto found =
        std::lower_bound(node.properties.begin(), node.properties.end(), name,
                         [](const auto& entry, std::string_view key) { return entry.first < key; });
    if (found == node.properties.end() || found->first != name) return nullptr;
    return &nodes[found->second];
  }
};

namespace {

using Schema = CrdDefaults::Schema;
using Node = CrdDefaults::Schema::Node;

constexpr std::string_view kCrdApiVersion = "apiextensions.k8s.io/v1";
// Deeper than parseManifests lets any document nest; only a caller handing
// over JSON from elsewhere meets it.
constexpr size_t kMaxDefaultDepth = 256;

std::optional<size_t> countValues(const JsonValue& value, size_t depth) {
  if (depth > kMaxDefaultDepth) return std::nullopt;
  size_t count = 1;
  if (value.IsObject()) {
    for (const auto& entry : value.GetObject()) {
      const std::optional<size_t> inner = countValues(entry.value, depth + 1);
      if (!inner) return std::nullopt;
      count += *inner;
    }
  } else if (value.IsArray()) {
    for (const JsonValue& element : value.GetArray()) {
      const std::optional<size_t> inner = countValues(element, depth + 1);
      if (!inner) return std::nullopt;
      count += *inner;
    }
  }
  return count;
}

// Reads an openAPIV3Schema into `schema`'s nodes. Only what defaulting reads
// is kept: properties, items, additionalProperties (when it is a schema, not
// a boolean), default and nullable. The allOf/anyOf/oneOf/not of a
// structural schema may not hold defaults, so they are not read.
class SchemaReader {
 public:
  SchemaReader(Schema& schema, size_t& nodes, const CrdDefaultLimits& limits)
      : schema_(schema), nodes_(nodes), limits_(limits) {}

  std::optional<uint32_t> read(const JsonValue& value, const std::string& path, size_t depth) {
    if (!value.IsObject()) {
      fail(path, "a schema is an object");
      return std::nullopt;
    }
    if (depth > limits_.maxDepth) {
      fail(path, "nests deeper than " + std::to_string(limits_.maxDepth) + " levels");
      return std::nullopt;
    }
    if (++nodes_ > limits_.maxSchemaNodes) {
      fail(path, "more than " + std::to_string(limits_.maxSchemaNodes) + " schema nodes");
      return std::nullopt;
    }
    Node node;
    if (!readDefault(value, path, node)) return std::nullopt;
    node.nullable = member(&value, "nullable") != nullptr && member(&value, "nullable")->IsTrue();
    if (!readProperties(value, path, depth, node)) return std::nullopt;
    if (!readChild(value, "items", path, depth, node.items)) return std::nullopt;
    if (!readChild(value, "additionalProperties", path, depth, node.additionalProperties)) {
      return std::nullopt;
    }
    const bool plain = !node.defaultIndex && !node.nullable && node.properties.empty() &&
                       !node.items && !node.additionalProperties;
    if (plain) return 0;
    schema_.nodes.push_back(std::move(node));
    return static_cast<uint32_t>(schema_.nodes.size() - 1);
  }

  const std::string& error() const { return error_; }

 private:
  // Keeps the first reason: the innermost, since a child fails before its parent.
  bool fail(const std::string& path, const std::string& why) {
    if (error_.empty()) error_ = "openAPIV3Schema" + path + ": " + why;
    return false;
  }

  // A null default is no default, as the API server reads one.
  bool readDefault(const JsonValue& value, const std::string& path, Node& node) {
    const JsonValue* defaultValue = member(&value, "default");
    if (defaultValue == nullptr || defaultValue->IsNull()) return true;
    const std::optional<size_t> values = countValues(*defaultValue, 0);
    if (!values) return fail(path + ".default", "nests too deep");
    JsonAllocator& allocator = schema_.defaults.GetAllocator();
    schema_.defaults.PushBack(JsonValue(*defaultValue, allocator), allocator);
    node.defaultIndex = schema_.defaults.Size() - 1;
    node.defaultValues = *values;
    return true;
  }

  bool readProperties(const JsonValue& value, const std::string& path, size_t depth, Node& node) {
    const JsonValue* properties = member(&value, "properties");
    if (properties == nullptr) return true;
    if (!properties->IsObject()) return fail(path + ".properties", "is an object");
    for (const auto& entry : properties->GetObject()) {
      const std::string name(entry.name.GetString(), entry.name.GetStringLength());
      const std::optional<uint32_t> child = read(entry.value, path + "." + name, depth + 1);
      if (!child) return false;
      node.properties.emplace_back(name, *child);
    }
    std::sort(node.properties.begin(), node.properties.end());
    for (size_t i = 0; i < node.properties.size(); ++i) {
      if (schema_.nodes[node.properties[i].second].defaultIndex) {
        node.defaultedProperties.push_back(static_cast<uint32_t>(i));
      }
    }
    return true;
  }

  // items (one schema in a structural schema) or additionalProperties (a
  // schema, or a boolean that says nothing about defaults).
  bool readChild(const JsonValue& value, std::string_view key, const std::string& path,
                 size_t depth, std::optional<uint32_t>& child) {
    const JsonValue* schema = member(&value, key);
    if (schema == nullptr || schema->IsBool()) return true;
    child = read(*schema, path + "." + std::string(key), depth + 1);
    return child.has_value();
  }

  Schema& schema_;
  size_t& nodes_;
  const CrdDefaultLimits& limits_;
  std::string error_;
};

// The API server's defaulting of one object, bounded: false as soon as a
// limit is passed, leaving the value half done (the caller walks a copy).
class DefaultingWalk {
 public:
  DefaultingWalk(const Schema& schema, JsonAllocator& allocator, const CrdDefaultLimits& limits)
      : schema_(schema), allocator_(allocator), limits_(limits) {}

  bool walk(JsonValue& value, const Node& node, size_t depth) {
    if (depth > limits_.maxDepth || !spend(1)) return false;
    if (value.IsObject()) return setDefaults(value, node) && walkMembers(value, node, depth);
    if (value.IsArray() && node.items) return walkElements(value, node, depth);
    return true;
  }

  DefaultingResult result{DefaultingOutcome::Applied, 0, 0};

 private:
  bool spend(size_t values) {
    visited_ += values;
    return visited_ <= limits_.maxVisited;
  }

  bool takeDefault(JsonValue& target, const Node& node) {
    if (!spend(node.defaultValues)) return false;
    target.CopyFrom(schema_.defaults[*node.defaultIndex], allocator_);
    ++result.defaultsSet;
    return true;
  }

  // Each property with a default that the object lacks, or holds as a null
  // the schema does not allow, takes a copy of the default.
  bool setDefaults(JsonValue& object, const Node& node) {
    for (const uint32_t position : node.defaultedProperties) {
      const auto& [name, childIndex] = node.properties[position];
      const Node& child = schema_.nodes[childIndex];
      JsonValue* current = member(&object, name);
      if (current == nullptr) {
        JsonValue key(name.data(), static_cast<rapidjson::SizeType>(name.size()), allocator_);
        object.AddMember(key, JsonValue(), allocator_);
        current = &(object.MemberEnd() - 1)->value;
      } else if (!current->IsNull() || child.nullable) {
        continue;
      }
      if (!takeDefault(*current, child)) return false;
    }
    return true;
  }

  // Every member with a schema is walked, defaults just set included; a null
  // the schema does not allow takes the default (an additionalProperties
  // one) or, without one, is dropped. Members without a schema are left.
  bool walkMembers(JsonValue& object, const Node& node, size_t depth) {
    const Node* additional =
        node.additionalProperties ? &schema_.nodes[*node.additionalProperties] : nullptr;
    // By index: members are erased on the way, and comparing RapidJSON's
    // mutable member iterators is ambiguous under C++20's reversed operators.
    for (rapidjson::SizeType index = 0; index < object.MemberCount();) {
      const auto entry = object.MemberBegin() + index;
      const std::string_view name(entry->name.GetString(), entry->name.GetStringLength());
      const Node* child = schema_.property(node, name);
      if (child == nullptr) child = additional;
      if (child == nullptr) {
        ++index;
        continue;
      }
      if (entry->value.IsNull() && !child->nullable) {
        if (!child->defaultIndex) {
          object.EraseMember(entry);
          ++result.nullsDropped;
          continue;
        }
        if (!takeDefault(entry->value, *child)) return false;
      }
      if (!walk(entry->value, *child, depth + 1)) return false;
      ++index;
    }
    return true;
  }

  bool walkElements(JsonValue& array, const Node& node, size_t depth) {
    const Node& items = schema_.nodes[*node.items];
    for (JsonValue& element : array.GetArray()) {
      if (element.IsNull() && !items.nullable && items.defaultIndex &&
          !takeDefault(element, items)) {
        return false;
      }
      if (!walk(element, items, depth + 1)) return false;
    }
    return true;
  }

  const Schema& schema_;
  JsonAllocator& allocator_;
  const CrdDefaultLimits& limits_;
  size_t visited_ = 0;
};

// "CustomResourceDefinition widgets.example.com", as errors name the document.
std::string documentName(const JsonValue& document) {
  const std::string_view kind = stringMember(&document, "kind");
  const std::string_view name = stringMember(member(&document, "metadata"), "name");
  std::string label = kind.empty() ? "a document without kind" : std::string(kind);
  if (!name.empty()) label += " " + std::string(name);
  return label;
}

}  // namespace

CrdDefaults::Builder::Builder(CrdDefaultLimits limits)
    : set_(std::unique_ptr<CrdDefaults>(new CrdDefaults(limits))) {}
CrdDefaults::Builder::~Builder() = default;
CrdDefaults::Builder::Builder(Builder&&) noexcept = default;
CrdDefaults::Builder& CrdDefaults::Builder::operator=(Builder&&) noexcept = default;
CrdDefaults::~CrdDefaults() = default;

bool CrdDefaults::isCustomResourceDefinition(const JsonValue& document) {
  return stringMember(&document, "kind") == "CustomResourceDefinition" &&
         splitApiVersion(stringMember(&document, "apiVersion")).group == "apiextensions.k8s.io";
}

std::vector<const JsonValue*> CrdDefaults::definitionsIn(const JsonValue& document) {
  std::vector<const JsonValue*> out;
  if (isCustomResourceDefinition(document)) out.push_back(&document);
  const std::string_view kind = stringMember(&document, "kind");
  const JsonValue* items = member(&document, "items");
  if (kind.size() >= 4 && kind.substr(kind.size() - 4) == "List" && isArray(items)) {
    for (const JsonValue& item : items->GetArray()) {
      for (const JsonValue* crd : definitionsIn(item)) out.push_back(crd);
    }
  }
  return out;
}

bool CrdDefaults::Builder::add(const JsonValue& crd, std::string* error) {
  const auto refuse = [&](const std::string& text) {
    if (error != nullptr) *error = documentName(crd) + ": " + text;
    return false;
  };
  if (!isCustomResourceDefinition(crd)) return refuse("not a CustomResourceDefinition");
  if (stringMember(&crd, "apiVersion") != kCrdApiVersion) {
    return refuse("only " + std::string(kCrdApiVersion) + " is read, not " +
                  std::string(stringMember(&crd, "apiVersion")));
  }
  const JsonValue* spec = member(&crd, "spec");
  const std::string group(stringMember(spec, "group"));
  const std::string kind(stringMember(member(spec, "names"), "kind"));
  const JsonValue* versions = member(spec, "versions");
  if (group.empty() || kind.empty() || !isArray(versions)) {
    return refuse("spec.group, spec.names.kind and spec.versions are required");
  }
  try {
    std::vector<std::pair<Key, std::shared_ptr<const Schema>>> read;
    for (rapidjson::SizeType i = 0; i < versions->Size(); ++i) {
      const JsonValue& version = (*versions)[i];
      const std::string where = "spec.versions[" + std::to_string(i) + "]";
      const JsonValue* served = member(&version, "served");
      if (served == nullptr || !served->IsTrue()) continue;
      const std::string name(stringMember(&version, "name"));
      const JsonValue* openApi = member(member(&version, "schema"), "openAPIV3Schema");
      if (name.empty() || openApi == nullptr) {
        return refuse(where + ": a served version has a name and schema.openAPIV3Schema");
      }
      auto schema = std::make_shared<Schema>();
      SchemaReader reader(*schema, nodes_, set_->limits_);
      const std::optional<uint32_t> root = reader.read(*openApi, "", 0);
      if (!root) return refuse(where + ".schema." + reader.error());
      schema->root = *root;
      read.emplace_back(Key{group, name, kind}, std::move(schema));
    }
    for (auto& [key, schema] : read) set_->schemas_[key] = std::move(schema);
    return true;
  } catch (const std::exception& e) {
    return refuse(std::string("cannot be read: ") + e.what());
  }
}

std::shared_ptr<const CrdDefaults> CrdDefaults::Builder::build() && {
  return std::shared_ptr<const CrdDefaults>(std::move(set_));
}

bool CrdDefaults::describes(std::string_view group, std::string_view version,
                            std::string_view kind) const {
  return schemas_.find(Key(group, version, kind)) != schemas_.end();
}

DefaultingResult CrdDefaults::apply(JsonValue& object, JsonAllocator& allocator) const {
  const GroupVersion groupVersion = splitApiVersion(stringMember(&object, "apiVersion"));
  const auto found =
      schemas_.find(Key(groupVersion.group, groupVersion.version, stringMember(&object, "kind")));
  if (found == schemas_.end() || !object.IsObject()) return {};
  const Schema& schema = *found->second;
  try {
    // A copy is walked so that an object past a limit is left as written,
    // never half defaulted.
    JsonValue working(object, allocator);
    DefaultingWalk walk(schema, allocator, limits_);
    if (!walk.walk(working, schema.nodes[schema.root], 0)) {
      return {DefaultingOutcome::LimitReached, 0, 0};
    }
    object.Swap(working);
    return walk.result;
  } catch (const std::exception&) {
    return {DefaultingOutcome::LimitReached, 0, 0};
  }
}

}  // namespace aiadmit
