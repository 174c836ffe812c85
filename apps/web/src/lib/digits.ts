/**
 * A whole number with its thousands grouped, as `n.toLocaleString('en-US')` gives it ("1,245", "-20,000") without
 * `Intl`, whose first use costs a page 50–90 ms (docs/decisions/058-no-intl-on-first-pages.md).
 */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n)
  const digits = String(Math.abs(n))
  let grouped = digits.slice(0, ((digits.length - 1) % 3) + 1)
  for (let at = grouped.length; at < digits.length; at += 3) grouped += `,${digits.slice(at, at + 3)}`
  return n < 0 ? `-${grouped}` : grouped
}
