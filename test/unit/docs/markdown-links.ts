/**
 * The relative links of a Markdown page and the anchors its headings make,
 * as GitHub renders them, for the docs' link test (docs.test.ts).
 */

/** The page without its fenced code blocks, where nothing is a link or a heading. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/**
 * A heading's anchor by GitHub's rule (github-slugger, which github.com
 * follows): the rendered text lower-cased, every character that is not a
 * letter, mark, digit, connector (`_`), hyphen or space dropped, each space
 * a hyphen. So "The `--verify` levels" is `the---verify-levels`.
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** Every anchor the page's headings make; a repeated one gets -1, -2, as on GitHub. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = githubSlug(heading as string);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The targets of its links and images that point into the repository (not a URL). */
export function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: +"[^"]*")?\)/g)]
    .map(([, target]) => target as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}
