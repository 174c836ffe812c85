import { useRef, useState, type DragEvent } from 'react'

/**
 * Whether files are dragged over a drop zone, for its highlight (`data-over`). The browser sends the zone a
 * `dragleave` each time the pointer moves onto one of the zone's own children (right after the child's `dragenter`):
 * treating every leave as the end switched the highlight off and on again as the pointer passed over the zone's
 * picture, buttons and text. The entries and leaves are counted instead: the pointer has left the zone when each
 * `dragenter` inside it has had its `dragleave`. `dragover` allows the drop (and lights the zone for a drag that began
 * inside it); `end()` (a drop) clears it.
 */
export function useDragOver() {
  const depth = useRef(0)
  const [over, setOver] = useState(false)
  const end = () => {
    depth.current = 0
    setOver(false)
  }
  const allowDrop = (event: DragEvent) => {
    event.preventDefault()
    setOver(true)
  }
  return {
    over,
    end,
    zoneProps: {
      onDragEnter: (event: DragEvent) => {
        depth.current += 1
        allowDrop(event)
      },
      onDragOver: allowDrop,
      onDragLeave: () => {
        depth.current = Math.max(0, depth.current - 1)
        if (depth.current === 0) setOver(false)
      },
    },
  }
}
