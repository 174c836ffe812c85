import { ChevronLeftIcon, ChevronRightIcon } from '../../ui/icons'
import { pageItems } from './list-params'
import styles from './notes.module.css'
import { groupDigits } from '../../lib/digits'
import { pageCount, pageRange } from './rules'

/** "21–40 of 245" and the page buttons (previous, numbers with gaps, next). */
export function Pagination({
  page,
  pageSize,
  total,
  onPage,
}: {
  page: number
  pageSize: number
  total: number
  onPage: (page: number) => void
}) {
  const count = pageCount(total, pageSize)
  const range = pageRange(page, pageSize, total)
  // Previous / Next are aria-disabled at either end, not `disabled`: a keyboard user who pressed Next to the last page
  // would be dropped to <body>. A press there does nothing.
  const go = (target: number) => {
    if (target < 1 || target > count) return
    onPage(target)
    document.getElementById('main')?.scrollIntoView({ block: 'start' })
  }
  return (
    <nav className={styles.pagination} aria-label="Pages">
      <span className={styles.date} data-testid="page-range">
        {range ? `${groupDigits(range.from)}–${groupDigits(range.to)} of ${groupDigits(total)}` : `0 of ${groupDigits(total)}`}
      </span>
      {count > 1 ? (
        <ul className={styles.pages}>
          <li>
            <button type="button" className={styles.pageButton} aria-disabled={page <= 1} onClick={() => go(page - 1)} aria-label="Previous page">
              <ChevronLeftIcon size={16} />
            </button>
          </li>
          {pageItems(page, count).map((item, i) =>
            item === null ? (
              <li key={`gap-${i}`} className={styles.gap} aria-hidden="true">
                …
              </li>
            ) : (
              <li key={item}>
                <button
                  type="button"
                  className={styles.pageButton}
                  aria-current={item === page ? 'page' : undefined}
                  aria-label={`Page ${item}`}
                  onClick={() => go(item)}
                >
                  {item}
                </button>
              </li>
            ),
          )}
          <li>
            <button type="button" className={styles.pageButton} aria-disabled={page >= count} onClick={() => go(page + 1)} aria-label="Next page">
              <ChevronRightIcon size={16} />
            </button>
          </li>
        </ul>
      ) : null}
    </nav>
  )
}
