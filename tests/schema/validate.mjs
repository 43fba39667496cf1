// Validates Kubernetes objects against the API schemas of kubernetes-models
// (built-in kinds) and @kubernetes-models/cert-manager (cert-manager.io kinds).
//
//   node validate.mjs FILE...
//
// Each FILE holds one JSON object, a JSON array of objects, or a List. Prints
// one line per object ("ok Kind/name" or "FAIL Kind/name: reason") and exits
// 1 when any object is invalid or of an apiVersion/kind the package lacks.
import { readFileSync } from "node:fs";

const cache = new Map();

// The package that holds the schemas of an API group.
function packageFor(apiVersion) {
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  if (group === "cert-manager.io" || group.endsWith(".cert-manager.io")) {
    return "@kubernetes-models/cert-manager";
  }
  return "kubernetes-models";
}

async function modelFor(apiVersion, kind) {
  const key = `${apiVersion}/${kind}`;
  if (!cache.has(key)) {
    let model = null;
    if (typeof apiVersion === "string" && typeof kind === "string") {
      try {
        const module = await import(`${packageFor(apiVersion)}/${apiVersion}/${kind}`);
        model = module[kind] ?? module.default ?? null;
      } catch {
        model = null;
      }
    }
    cache.set(key, model);
  }
  return cache.get(key);
}

function objectsIn(value) {
  if (Array.isArray(value)) return value;
  if (value && typeof value.kind === "string" && value.kind.endsWith("List") && Array.isArray(value.items)) {
    return value.items;
  }
  return [value];
}

let failures = 0;
for (const file of process.argv.slice(2)) {
  const objects = objectsIn(JSON.parse(readFileSync(file, "utf8")));
  for (const object of objects) {
    const label = `${object?.kind ?? "?"}/${object?.metadata?.name ?? object?.metadata?.generateName ?? "?"}`;
    const Model = await modelFor(object?.apiVersion, object?.kind);
    if (!Model) {
      failures++;
      console.log(`FAIL ${label}: no schema for ${object?.apiVersion} ${object?.kind}`);
      continue;
    }
    try {
      new Model(object).validate();
      console.log(`ok ${label}`);
    } catch (error) {
      failures++;
      console.log(`FAIL ${label}: ${error.message}`);
    }
  }
}
process.exit(failures === 0 ? 0 : 1);
