// Decides, as kube-apiserver does, which webhooks of the given webhook
// configurations an admission request is sent to: rules, namespaceSelector,
// objectSelector and matchConditions (CEL, by @bufbuild/cel).
//
//   node match_conditions.mjs INPUT.json
//
// INPUT holds {"configurations": [...], "requests": [...]}, each request
// {"id", "namespaceLabels", "request": {"resource": {group, version,
// resource}, "subResource", "operation", "namespace" (absent for a
// cluster-scoped object), ...}, "object", "oldObject"}.
// Prints {"results": [{"id", "webhooks": {NAME: OUTCOME}}]} where OUTCOME is
// "call", "skip" (a rule, selector or condition leaves the request out) or
// "error: ..." (a condition could not be evaluated: the webhook's
// failurePolicy decides). Exits 2 when a condition does not parse.
import { readFileSync } from "node:fs";
import { celEnv, isCelError, parse, plan } from "@bufbuild/cel";

function toCel(value) {
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === "object") {
    return new Map(Object.entries(value).map(([key, item]) => [key, toCel(item)]));
  }
  // JSON integers are CEL ints in the API server (int64), not doubles.
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  return value;
}

function matchesList(list, value) {
  return Array.isArray(list) && (list.includes("*") || list.includes(value));
}

function matchesResource(patterns, resource, subResource) {
  const wanted = subResource ? `${resource}/${subResource}` : resource;
  return (patterns ?? []).some((pattern) => {
    if (pattern === "*/*") return true;
    if (pattern === "*") return !subResource;
    if (pattern.endsWith("/*")) return pattern.slice(0, -2) === resource && !!subResource;
    if (pattern.startsWith("*/")) return !!subResource && pattern.slice(2) === subResource;
    return pattern === wanted;
  });
}

function ruleMatches(rule, request) {
  const resource = request.resource ?? {};
  return (
    matchesList(rule.apiGroups, resource.group ?? "") &&
    matchesList(rule.apiVersions, resource.version ?? "") &&
    matchesList(rule.operations, request.operation) &&
    matchesResource(rule.resources, resource.resource, request.subResource) &&
    scopeMatches(rule.scope, request)
  );
}

// A request without a namespace is for a cluster-scoped object.
function isNamespaced(request) {
  return typeof request.namespace === "string" && request.namespace !== "";
}

function scopeMatches(scope, request) {
  if (scope === undefined || scope === "*") return true;
  if (scope === "Namespaced") return isNamespaced(request);
  if (scope === "Cluster") return !isNamespaced(request);
  throw new Error(`unknown rule scope ${scope}`);
}

function selectorMatches(selector, labels) {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const { key, operator, values } of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(labels, key);
    switch (operator) {
      case "In":
        if (!present || !values.includes(labels[key])) return false;
        break;
      case "NotIn":
        if (present && values.includes(labels[key])) return false;
        break;
      case "Exists":
        if (!present) return false;
        break;
      case "DoesNotExist":
        if (present) return false;
        break;
      default:
        throw new Error(`unknown selector operator ${operator}`);
    }
  }
  return true;
}

const environment = celEnv();
const compiled = new Map();
function program(expression) {
  if (!compiled.has(expression)) compiled.set(expression, plan(environment, parse(expression)));
  return compiled.get(expression);
}

function conditionOutcome(conditions, bindings) {
  let error = null;
  for (const { name, expression } of conditions ?? []) {
    let result;
    try {
      result = program(expression)(bindings);
    } catch (thrown) {
      result = thrown;
    }
    if (result === false) return "skip";
    if (result !== true) {
      const reason = isCelError(result) || result instanceof Error ? result.message : `not a bool: ${result}`;
      error ??= `error: ${name}: ${reason}`;
    }
  }
  return error ?? "call";
}

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const webhooks = input.configurations.flatMap((configuration) => configuration.webhooks ?? []);
for (const webhook of webhooks) {
  for (const { name, expression } of webhook.matchConditions ?? []) {
    try {
      program(expression);
    } catch (thrown) {
      console.error(`${webhook.name}: condition ${name} does not parse: ${thrown.message}`);
      process.exit(2);
    }
  }
}

const results = input.requests.map(({ id, namespaceLabels, request, object, oldObject }) => {
  const bindings = {
    request: toCel(request),
    object: toCel(object ?? null),
    oldObject: toCel(oldObject ?? null),
  };
  const outcomes = {};
  for (const webhook of webhooks) {
    const inScope =
      (webhook.rules ?? []).some((rule) => ruleMatches(rule, request)) &&
      // The namespaceSelector never leaves out a cluster-scoped object other
      // than a Namespace (none is sent here).
      (!isNamespaced(request) || selectorMatches(webhook.namespaceSelector, namespaceLabels ?? {})) &&
      selectorMatches(webhook.objectSelector, object?.metadata?.labels ?? {});
    outcomes[webhook.name] = inScope ? conditionOutcome(webhook.matchConditions, bindings) : "skip";
  }
  return { id, webhooks: outcomes };
});
console.log(JSON.stringify({ results }));
