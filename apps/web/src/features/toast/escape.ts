/**
 * Whether an Escape pressed outside the notifications belongs to something else than the newest toast. The rule
 * for the app's own parts: whoever uses an Escape calls `preventDefault()` (Tamagui's dialogs do, the user menu
 * does, the notes search box does when it clears). Beyond that, an Escape typed into these is theirs, whether or
 * not they said so: an open dialog (modal or not, native `<dialog>` or ARIA), a menu or listbox, a `<select>`
 * (its list closes on Escape), a search field with text (the browser clears it), a field composing text with an
 * input method (Escape cancels the composition); and while a modal dialog is open, every Escape is the dialog's.
 */
export function escapeHasOtherUse(event: KeyboardEvent): boolean {
  if (event.defaultPrevented || event.isComposing) return true
  const target = event.target instanceof Element ? event.target : null
  if (target?.closest('dialog[open], [role="dialog"], [role="alertdialog"], [aria-modal="true"], [role="menu"], [role="listbox"], select')) {
    return true
  }
  if (target instanceof HTMLInputElement && target.type === 'search' && target.value !== '') return true
  return modalDialogOpen()
}

function modalDialogOpen(): boolean {
  if (document.querySelector('[aria-modal="true"]')) return true
  for (const dialog of Array.from(document.querySelectorAll('dialog[open]'))) {
    try {
      if (dialog.matches(':modal')) return true
    } catch {
      return true // a browser without :modal: count any open <dialog>
    }
  }
  return false
}
