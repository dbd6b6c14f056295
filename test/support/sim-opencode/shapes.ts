// JSON compared by shape, not by value: which keys an object has and the JSON type of each, recursively; an array by
// the distinct shapes of its elements; an OpenCode id as a key stands for any id. Two answers of the same shape differ
// only in ids, times, texts and counts.

/** An OpenCode id used as a key (the status map's session ids): one key whatever the id. */
const ID = /^[a-z]{3}_[0-9a-f]{12}[0-9A-Za-z]{14}$/;

export type Shape = string | { [key: string]: Shape } | { "[]": Shape[] };

export function shapeOf(value: unknown): Shape {
  if (value === null) return "null";
  if (Array.isArray(value)) {
    const distinct = new Map<string, Shape>();
    for (const element of value) {
      const shape = shapeOf(element);
      distinct.set(JSON.stringify(shape), shape);
    }
    return { "[]": [...distinct.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, shape]) => shape) };
  }
  if (typeof value === "object") {
    const out: Record<string, Shape> = {};
    for (const key of Object.keys(value as object).sort())
      out[ID.test(key) ? `<${key.slice(0, 3)} id>` : key] = shapeOf((value as Record<string, unknown>)[key]);
    return out;
  }
  return typeof value;
}

const isArrayShape = (s: Shape): s is { "[]": Shape[] } => typeof s === "object" && "[]" in s;

/**
 * Where `actual` differs from `expected`, one line per difference (`path: what`); empty when they have one shape.
 * An array's element shapes are matched as a set: each of one side must be among the other's.
 */
export function shapeDifferences(expected: Shape, actual: Shape, path = "$"): string[] {
  if (typeof expected === "string" || typeof actual === "string")
    return expected === actual ? [] : [`${path}: ${describe(expected)} expected, ${describe(actual)} found`];
  if (isArrayShape(expected) || isArrayShape(actual)) {
    if (!isArrayShape(expected) || !isArrayShape(actual))
      return [`${path}: ${describe(expected)} expected, ${describe(actual)} found`];
    return arrayDifferences(expected["[]"], actual["[]"], path);
  }
  const found: string[] = [];
  for (const key of Object.keys(expected))
    if (!(key in actual)) found.push(`${path}.${key}: missing`);
    else found.push(...shapeDifferences(expected[key]!, actual[key]!, `${path}.${key}`));
  for (const key of Object.keys(actual)) if (!(key in expected)) found.push(`${path}.${key}: not expected`);
  return found;
}

function arrayDifferences(expected: Shape[], actual: Shape[], path: string): string[] {
  const text = (s: Shape) => JSON.stringify(s);
  const actualTexts = new Set(actual.map(text));
  const expectedTexts = new Set(expected.map(text));
  const missing = expected.filter((s) => !actualTexts.has(text(s)));
  const extra = actual.filter((s) => !expectedTexts.has(text(s)));
  // As many element shapes each side: each expected one paired with the found one nearest to it, told field by field.
  if (missing.length === extra.length) {
    const left = [...extra];
    return missing.flatMap((expectedShape) => {
      const diffs = left.map((candidate) => shapeDifferences(expectedShape, candidate, `${path}[]`));
      const nearest = diffs.reduce((best, d, i) => (d.length < diffs[best]!.length ? i : best), 0);
      left.splice(nearest, 1);
      return diffs[nearest]!;
    });
  }
  return [
    ...missing.map((s) => `${path}[]: an element ${text(s).slice(0, 300)} expected, none found`),
    ...extra.map((s) => `${path}[]: an element ${text(s).slice(0, 300)} not expected`),
  ];
}

function describe(shape: Shape): string {
  if (typeof shape === "string") return shape;
  return isArrayShape(shape) ? "array" : "object";
}
