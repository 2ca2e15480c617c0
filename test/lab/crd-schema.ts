/**
 * What a kube-apiserver checks of a custom resource, without one (none can
 * run here, LAB.md): the CRD's openAPIV3Schema for the document's version,
 * validated with ajv, and Kubernetes' pruning of fields the schema does not
 * list (apiextensions-apiserver pkg/apiserver/schema/pruning): in a
 * structural schema every object that lists `properties` keeps only those,
 * unless it says x-kubernetes-preserve-unknown-fields. `kubectl apply`'s
 * strict field validation rejects such a field; a client that skips it has
 * it pruned in silence. Here it is an error either way
 * (additionalProperties: false where Kubernetes would prune).
 *
 * What ajv cannot check is said, not pretended: the x-kubernetes-validations
 * rules are CEL (listed by `celRules`, for the tests to read), and
 * x-kubernetes-list-type map/set uniqueness is not enforced. The document's
 * own metadata is the API server's ObjectMeta, not the CRD's (its schema
 * there is a bare object).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { parse } from 'yaml';

export const CRDS = join(import.meta.dirname, '..', 'fixtures', 'crds');

type Schema = { [key: string]: unknown };

interface Crd {
  spec: {
    group: string;
    names: { kind: string };
    versions: { name: string; served: boolean; schema: { openAPIV3Schema: Schema } }[];
  };
}

/** Kubernetes' own keywords: annotations to ajv, which has no vocabulary for them. */
const KUBERNETES_KEYWORDS = [
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
];

/**
 * The formats these CRDs use, as the API server reads them: int32/int64 and
 * date-time bound nothing a template writes here; an empty or unknown one
 * (`format: leader` in one CRD's description text is no keyword) is ignored.
 */
const FORMATS = { int32: true, int64: true, 'date-time': true, byte: true, '': true } as const;

/** The schema with additionalProperties: false wherever Kubernetes would prune. */
export function prunedStrictly(schema: Schema): Schema {
  const copy: Schema = { ...schema };
  const properties = copy.properties as Record<string, Schema> | undefined;
  if (properties !== undefined) {
    copy.properties = Object.fromEntries(
      Object.entries(properties).map(([name, child]) => [name, prunedStrictly(child)]),
    );
    if (
      copy['x-kubernetes-preserve-unknown-fields'] !== true &&
      copy.additionalProperties === undefined
    ) {
      copy.additionalProperties = false;
    }
  }
  if (typeof copy.items === 'object' && copy.items !== null) {
    copy.items = prunedStrictly(copy.items as Schema);
  }
  if (typeof copy.additionalProperties === 'object' && copy.additionalProperties !== null) {
    copy.additionalProperties = prunedStrictly(copy.additionalProperties as Schema);
  }
  // anyOf/allOf/oneOf/not only validate values in a structural schema: they name no fields.
  return copy;
}

export interface CrdCheck {
  kind: string;
  apiVersion: string;
  /** ajv's errors for the document, [] when the API server would take it unchanged. */
  errors(document: unknown): ErrorObject[];
  /** The CEL rules of the schema (not evaluated here), by their JSON path. */
  celRules: { path: string; rule: string }[];
}

/** The validator for one CRD file under test/fixtures/crds, at the version given. */
export function crdCheck(file: string, version: string): CrdCheck {
  const crd = parse(readFileSync(join(CRDS, file), 'utf8')) as Crd;
  const served = crd.spec.versions.find((v) => v.name === version && v.served);
  if (served === undefined) throw new Error(`${file} serves no version ${version}`);
  const root = served.schema.openAPIV3Schema;
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    strictTypes: false,
    formats: FORMATS,
    // ajv's code optimiser costs more than it saves on schemas this size: the LWS v0.10.0
    // CRD compiled in 5.3 s with it, 2.2 s without (measured here).
    code: { optimize: false },
  });
  ajv.addVocabulary(KUBERNETES_KEYWORDS);
  const schema = prunedStrictly(root);
  // The document's metadata is ObjectMeta, which the API server checks itself.
  (schema.properties as Record<string, Schema>).metadata = { type: 'object' };
  const validate = ajv.compile(schema);
  return {
    kind: crd.spec.names.kind,
    apiVersion: `${crd.spec.group}/${version}`,
    errors: (document) => (validate(document) ? [] : [...(validate.errors ?? [])]),
    celRules: celRulesOf(root, ''),
  };
}

function celRulesOf(schema: Schema, path: string): { path: string; rule: string }[] {
  const own = ((schema['x-kubernetes-validations'] as { rule: string }[] | undefined) ?? []).map(
    ({ rule }) => ({ path: path || '.', rule }),
  );
  const children = [
    ...Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {}).map(
      ([name, child]) => [`${path}.${name}`, child] as const,
    ),
    ...(typeof schema.items === 'object' ? [[`${path}[]`, schema.items as Schema] as const] : []),
    ...(typeof schema.additionalProperties === 'object'
      ? [[`${path}{}`, schema.additionalProperties as Schema] as const]
      : []),
  ];
  return [...own, ...children.flatMap(([childPath, child]) => celRulesOf(child, childPath))];
}

/** ajv's errors in one line each: where, and what. */
export function describeErrors(errors: ErrorObject[]): string[] {
  return errors.map((error) =>
    error.keyword === 'additionalProperties'
      ? `${error.instancePath || '/'}: unknown field ${(error.params as { additionalProperty: string }).additionalProperty} (pruned, or rejected by strict validation)`
      : `${error.instancePath || '/'}: ${error.message}`,
  );
}
