// Validates custom resources against the OpenAPI v3 schema of their CRD, as
// the API server does with strict field validation (kubectl's default):
//
//   node validate_crd.mjs --crds DIR FILE...
//
// DIR holds CRD manifests (YAML); each FILE one JSON object, a JSON array of
// objects, or a List. An object is checked against the schema of its
// apiVersion's version, which must be served. Prints one line per object
// ("ok Kind/name" or "FAIL Kind/name: path: reason; ...") and exits 1 when
// any object is invalid or has no CRD.
//
// What the API server does and this does too:
// - an unknown field is an error ("unknown field"), except under
//   x-kubernetes-preserve-unknown-fields; x-kubernetes-embedded-resource
//   objects also take apiVersion, kind and metadata;
// - the root metadata is an ObjectMeta, whatever the schema says of it;
// - a null field is pruned unless the schema says nullable (then null is a
//   value); x-kubernetes-int-or-string takes an integer or a string;
// - types, required, enum, bounds, lengths, patterns, and the formats
//   int32, int64, float, double, byte, date, date-time;
// - x-kubernetes-list-type set and map: no two items alike, or with the
//   same map keys.
// x-kubernetes-validations (CEL rules) are not evaluated here.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import yaml from "js-yaml";

const objectMetaSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    name: { type: "string" },
    generateName: { type: "string" },
    namespace: { type: "string" },
    selfLink: { type: "string" },
    uid: { type: "string" },
    resourceVersion: { type: "string" },
    generation: { type: "integer", format: "int64" },
    creationTimestamp: { type: ["string", "null"] },
    deletionTimestamp: { type: "string" },
    deletionGracePeriodSeconds: { type: "integer", format: "int64" },
    labels: { type: "object", additionalProperties: { type: "string" } },
    annotations: { type: "object", additionalProperties: { type: "string" } },
    ownerReferences: { type: "array", items: { type: "object" } },
    finalizers: { type: "array", items: { type: "string" } },
    managedFields: { type: "array", items: { type: "object" } },
  },
};

const knownFormats = new Set(["int32", "int64", "float", "double", "byte", "date", "date-time"]);
const copiedKeywords = [
  "enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems",
  "uniqueItems", "multipleOf", "minProperties", "maxProperties", "required",
];

// The JSON Schema (draft 7, for ajv) of a structural OpenAPI v3 schema.
function convert(schema, { root = false } = {}) {
  if (schema === undefined || schema === null) return {};
  const out = {};
  for (const key of copiedKeywords) if (schema[key] !== undefined) out[key] = schema[key];
  if (schema.exclusiveMinimum === true && schema.minimum !== undefined) {
    delete out.minimum;
    out.exclusiveMinimum = schema.minimum;
  }
  if (schema.exclusiveMaximum === true && schema.maximum !== undefined) {
    delete out.maximum;
    out.exclusiveMaximum = schema.maximum;
  }
  if (knownFormats.has(schema.format)) out.format = schema.format;
  if (schema["x-kubernetes-int-or-string"]) {
    // pattern applies to the string, bounds to the integer (JSON Schema);
    // the anyOf of integer and string that goes with it says only the type.
    out.type = ["integer", "string"];
    out.anyOf = [];
  } else if (schema.type) {
    out.type = schema.nullable ? [schema.type, "null"] : schema.type;
  }
  for (const key of ["anyOf", "allOf", "oneOf"]) {
    if (Array.isArray(schema[key]) && out[key] === undefined) out[key] = schema[key].map((s) => convert(s));
  }
  if (out.anyOf?.length === 0) delete out.anyOf;
  if (schema.not) out.not = convert(schema.not);
  if (schema.items) out.items = convert(schema.items);
  const listType = schema["x-kubernetes-list-type"];
  if (listType === "set") out.uniqueItems = true;
  if (listType === "map" && Array.isArray(schema["x-kubernetes-list-map-keys"])) {
    out.listMapKeys = schema["x-kubernetes-list-map-keys"];
  }
  const isObject = schema.type === "object" || schema.properties !== undefined;
  if (isObject) {
    out.properties = {};
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      out.properties[name] = convert(property);
    }
    if (schema["x-kubernetes-embedded-resource"]) {
      out.properties.apiVersion ??= { type: "string" };
      out.properties.kind ??= { type: "string" };
      out.properties.metadata = objectMetaSchema;
    }
    if (root) out.properties.metadata = objectMetaSchema;
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
      out.additionalProperties =
        schema.additionalProperties === true ? true : convert(schema.additionalProperties);
    } else {
      out.additionalProperties = schema["x-kubernetes-preserve-unknown-fields"] === true;
    }
  }
  return out;
}

const subschemaArrays = ["anyOf", "allOf", "oneOf"];
const subschemaFields = ["items", "not", "additionalProperties"];

// A CRD inlines the same subschemas many times (a PodSpec per template); ajv
// would generate code for each copy. Subschemas that repeat become one
// definition and $refs to it, so each is compiled once.
function shareRepeated(schema) {
  const entries = new Map(); // structural key -> { id, uses, size, schema }
  const entryOf = new Map(); // schema object -> entry
  function visit(node) {
    const parts = [];
    let size = 1;
    const child = (value) => {
      const entry = visit(value);
      size += entry.size;
      return entry.id;
    };
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties") {
        parts.push([key, Object.entries(value).map(([name, sub]) => [name, child(sub)])]);
      } else if (subschemaFields.includes(key) && typeof value === "object") {
        parts.push([key, child(value)]);
      } else if (subschemaArrays.includes(key)) {
        parts.push([key, value.map(child)]);
      } else {
        parts.push([key, value]);
      }
    }
    const key = JSON.stringify(parts);
    let entry = entries.get(key);
    if (!entry) {
      entry = { id: entries.size, uses: 0, size, schema: node };
      entries.set(key, entry);
    }
    entry.uses++;
    entryOf.set(node, entry);
    return entry;
  }
  visit(schema);
  const definitions = {};
  function rewrite(node, top) {
    const entry = entryOf.get(node);
    if (!top && entry.uses > 1 && entry.size > 20) {
      const name = `s${entry.id}`;
      if (!(name in definitions)) {
        definitions[name] = {};
        definitions[name] = rewrite(entry.schema, true);
      }
      return { $ref: `#/definitions/${name}` };
    }
    const out = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties") {
        out[key] = Object.fromEntries(Object.entries(value).map(([n, sub]) => [n, rewrite(sub, false)]));
      } else if (subschemaFields.includes(key) && typeof value === "object") {
        out[key] = rewrite(value, false);
      } else if (subschemaArrays.includes(key)) {
        out[key] = value.map((sub) => rewrite(sub, false));
      } else {
        out[key] = value;
      }
    }
    return out;
  }
  const root = rewrite(schema, true);
  root.definitions = definitions;
  return root;
}

// Drops null fields whose schema is not nullable, as the API server prunes them.
function pruneNulls(value, schema) {
  if (value === null || typeof value !== "object" || !schema) return;
  if (Array.isArray(value)) {
    for (const item of value) pruneNulls(item, schema.items);
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    const childSchema = schema.properties?.[key] ??
      (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
    if (child === null) {
      if (!childSchema?.nullable) delete value[key];
      continue;
    }
    pruneNulls(child, childSchema);
  }
}

// CRD patterns are Go (RE2) expressions, where (?i) turns case-insensitive
// matching on from there (prometheus-operator's "^(?i)(abort|warn)?$"); in
// JavaScript a flag of the whole expression, which is what such patterns mean.
function goRegExp(source, flags) {
  const insensitive = source.includes("(?i)");
  return new RegExp(source.replaceAll("(?i)", ""), flags + (insensitive ? "i" : ""));
}

function makeAjv() {
  const ajv = new Ajv({
    allErrors: true,
    strict: false,
    unicodeRegExp: false,
    inlineRefs: false,
    code: { regExp: goRegExp },
  });
  const int = (min, max) => ({
    type: "number",
    validate: (n) => Number.isInteger(n) && n >= min && n <= max,
  });
  ajv.addFormat("int32", int(-2147483648, 2147483647));
  ajv.addFormat("int64", int(Number.MIN_SAFE_INTEGER * 1024, Number.MAX_SAFE_INTEGER * 1024));
  ajv.addFormat("float", { type: "number", validate: (n) => Number.isFinite(n) });
  ajv.addFormat("double", { type: "number", validate: (n) => Number.isFinite(n) });
  ajv.addFormat("byte", /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/);
  ajv.addFormat("date", /^\d{4}-\d{2}-\d{2}$/);
  ajv.addFormat("date-time", /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/);
  ajv.addKeyword({
    keyword: "listMapKeys",
    type: "array",
    errors: true,
    validate: function listMapKeys(keys, items) {
      const seen = new Set();
      for (const item of items) {
        if (item === null || typeof item !== "object") continue;
        const key = JSON.stringify(keys.map((k) => item[k] ?? null));
        if (seen.has(key)) {
          listMapKeys.errors = [{ keyword: "listMapKeys", message: `duplicate entries for key ${key}` }];
          return false;
        }
        seen.add(key);
      }
      return true;
    },
  });
  return ajv;
}

// group/kind -> CRD, from the YAML or JSON files of `dir` whose names start
// with one of `groups` ("kubeflow.org_pytorchjobs.yaml", as controller-gen
// names them): CRDs are large, and only those are read.
function loadCrds(dir, groups) {
  const crds = new Map();
  for (const file of readdirSync(dir).sort()) {
    if (!/\.(ya?ml|json)$/.test(file)) continue;
    if (![...groups].some((group) => file.startsWith(`${group}_`))) continue;
    for (const crd of yaml.loadAll(readFileSync(join(dir, file), "utf8"))) {
      if (crd?.kind !== "CustomResourceDefinition") continue;
      crds.set(`${crd.spec.group}/${crd.spec.names.kind}`, crd);
    }
  }
  return crds;
}

// A field path as aiadmit prints it: members as ".name", keys that are not
// plain names as "[nvidia.com/gpu]", list items as "[0]".
function appendToken(path, token, isIndex) {
  if (isIndex) return `${path}[${token}]`;
  if (/^[A-Za-z0-9_-]+$/.test(token)) return path ? `${path}.${token}` : token;
  return `${path}[${token}]`;
}

// "spec.tasks[0].template" from ajv's "/spec/tasks/0/template".
function fieldPath(instancePath, object) {
  let path = "";
  let value = object;
  for (const raw of instancePath.split("/").slice(1)) {
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    path = appendToken(path, token, Array.isArray(value));
    value = value?.[token];
  }
  return path;
}

function describe(error, object) {
  const at = fieldPath(error.instancePath, object);
  if (error.keyword === "additionalProperties") {
    return `unknown field "${appendToken(at, error.params.additionalProperty, false)}"`;
  }
  if (error.keyword === "required") {
    return `${appendToken(at, error.params.missingProperty, false)}: Required value`;
  }
  const message = error.keyword === "type" ? `must be ${String(error.params.type).replace(",", " or ")}` : error.message;
  return `${at || "<root>"}: ${message}`;
}

function objectsIn(value) {
  if (Array.isArray(value)) return value;
  if (value && typeof value.kind === "string" && value.kind.endsWith("List") && Array.isArray(value.items)) {
    return value.items;
  }
  return [value];
}

const args = process.argv.slice(2);
const crdsAt = args.indexOf("--crds");
if (crdsAt < 0 || crdsAt + 1 >= args.length) {
  console.error("usage: node validate_crd.mjs --crds DIR FILE...");
  process.exit(2);
}
const files = args.filter((_, i) => i !== crdsAt && i !== crdsAt + 1);
const objects = files.flatMap((file) => objectsIn(JSON.parse(readFileSync(file, "utf8"))));
const crds = loadCrds(args[crdsAt + 1], new Set(objects.map((o) => String(o?.apiVersion).split("/")[0])));
const ajv = makeAjv();
const validators = new Map();

let failures = 0;
{
  for (const object of objects) {
    const label = `${object?.kind ?? "?"}/${object?.metadata?.name ?? object?.metadata?.generateName ?? "?"}`;
    const [group, version] = String(object?.apiVersion ?? "").split("/");
    const crd = crds.get(`${group}/${object?.kind}`);
    const served = crd?.spec.versions.find((v) => v.name === version && v.served);
    if (!served) {
      failures++;
      console.log(`FAIL ${label}: no served CRD version for ${object?.apiVersion} ${object?.kind}`);
      continue;
    }
    const key = `${group}/${version}/${object.kind}`;
    if (!validators.has(key)) {
      const schema = served.schema.openAPIV3Schema;
      validators.set(key, { schema, validate: ajv.compile(shareRepeated(convert(schema, { root: true }))) });
    }
    const { schema, validate } = validators.get(key);
    const copy = structuredClone(object);
    pruneNulls(copy, schema);
    if (validate(copy)) {
      console.log(`ok ${label}`);
    } else {
      failures++;
      const reasons = [...new Set(validate.errors.map((error) => describe(error, copy)))];
      console.log(`FAIL ${label}: ${reasons.join("; ")}`);
    }
  }
}
process.exit(failures === 0 ? 0 : 1);
