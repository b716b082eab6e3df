/**
 * A small BM25 index over tool names and descriptions, for `search_tools` in collapsed mode.
 * Built once per tool-set change and queried per call; inverted postings keep a query
 * proportional to the documents that share a term with it, not to the corpus size.
 */

/** Okapi BM25 parameters: the usual defaults (Lucene's, tool_search.rs's). */
const BM25 = {
  /** Term-frequency saturation. */
  k1: 1.2,
  /** How much a long description is discounted against the average length. */
  b: 0.75,
} as const;

/**
 * The name's tokens are counted this many times: a query word that names the tool outranks the
 * same word mentioned in passing in another tool's prose.
 */
const NAME_WEIGHT = 2;

export interface SearchDocument {
  name: string;
  description: string;
}

export interface SearchHit {
  name: string;
  score: number;
}

/**
 * Lower-cased word tokens: splits on anything not a letter or digit (so `snake_case` and the
 * upstream `__` separator) and on camelCase humps.
 */
export function tokenize(text: string): string[] {
  const spaced = text
    .replace(/([a-z\d])([A-Z])/g, '$1 $2') // camelCase
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2'); // HTTPServer → HTTP Server
  return spaced
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0);
}

interface Posting {
  doc: number;
  tf: number;
}

export class Bm25Index {
  private readonly names: string[] = [];
  private readonly postings = new Map<string, Posting[]>();
  /** Per document: k1 · (1 − b + b · length / average length), the query-independent part of BM25. */
  private readonly norms: Float64Array;

  constructor(docs: readonly SearchDocument[]) {
    let total = 0;
    const lengths: number[] = [];
    for (const doc of docs) {
      const id = this.names.length;
      this.names.push(doc.name);
      const nameTokens = tokenize(doc.name);
      const tokens = [...Array<string[]>(NAME_WEIGHT).fill(nameTokens).flat(), ...tokenize(doc.description)];
      lengths.push(tokens.length);
      total += tokens.length;
      const counts = new Map<string, number>();
      for (const t of tokens) counts.set(t, (counts.get(t) ?? 0) + 1);
      for (const [term, tf] of counts) {
        let list = this.postings.get(term);
        if (!list) this.postings.set(term, (list = []));
        list.push({ doc: id, tf });
      }
    }
    const average = docs.length === 0 ? 0 : total / docs.length;
    this.norms = Float64Array.from(lengths, (len) => BM25.k1 * (1 - BM25.b + (BM25.b * len) / average));
  }

  get size(): number {
    return this.names.length;
  }

  /**
   * Documents sharing at least one term with the query, best first (ties keep corpus order); with
   * `accept`, only documents it accepts count towards `limit`.
   */
  search(query: string, limit: number, accept?: (name: string) => boolean): SearchHit[] {
    const terms = [...new Set(tokenize(query))];
    const n = this.names.length;
    const scores = new Float64Array(n);
    const touched: number[] = [];
    for (const term of terms) {
      const list = this.postings.get(term);
      if (!list) continue;
      // Lucene's idf: always positive, so a term in most documents still counts a little.
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const { doc, tf } of list) {
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += (idf * tf * (BM25.k1 + 1)) / (tf + this.norms[doc]!);
      }
    }
    touched.sort((a, b) => scores[b]! - scores[a]! || a - b);
    const hits: SearchHit[] = [];
    for (const doc of touched) {
      if (hits.length >= limit) break;
      const name = this.names[doc]!;
      if (accept === undefined || accept(name)) hits.push({ name, score: scores[doc]! });
    }
    return hits;
  }
}
