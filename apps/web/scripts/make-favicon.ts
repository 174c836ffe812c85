/**
 * Writes public/favicon.ico: a 32×32, 32-bit ICO of the Foyer mark (a dark rounded square with an "F"),
 * drawn with 4×4 supersampling. Run: node scripts/make-favicon.ts (Node 22 strips the types).
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const SIZE = 32
const SAMPLES = 4
const BACKGROUND = [0x18, 0x18, 0x1b] as const // zinc-900
const FOREGROUND = [0xfa, 0xfa, 0xfa] as const

function insideRoundedRect(x: number, y: number, r: number): boolean {
  const cx = Math.min(Math.max(x, r), SIZE - r)
  const cy = Math.min(Math.max(y, r), SIZE - r)
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r
}

function insideLetter(x: number, y: number): boolean {
  const stem = x >= 10 && x <= 13.4 && y >= 7.5 && y <= 24.5
  const top = x >= 10 && x <= 22.5 && y >= 7.5 && y <= 10.9
  const middle = x >= 10 && x <= 20 && y >= 14.4 && y <= 17.8
  return stem || top || middle
}

const pixels = Buffer.alloc(SIZE * SIZE * 4)
for (let row = 0; row < SIZE; row++) {
  for (let col = 0; col < SIZE; col++) {
    let shape = 0
    let letter = 0
    for (let sy = 0; sy < SAMPLES; sy++) {
      for (let sx = 0; sx < SAMPLES; sx++) {
        const x = col + (sx + 0.5) / SAMPLES
        const y = row + (sy + 0.5) / SAMPLES
        if (insideRoundedRect(x, y, 7)) {
          shape++
          if (insideLetter(x, y)) letter++
        }
      }
    }
    const total = SAMPLES * SAMPLES
    const alpha = shape / total
    const mix = shape ? letter / shape : 0
    const rgb = BACKGROUND.map((b, i) => Math.round(b + ((FOREGROUND[i] ?? b) - b) * mix))
    // ICO stores rows bottom-up, pixels as BGRA.
    const offset = ((SIZE - 1 - row) * SIZE + col) * 4
    pixels[offset] = rgb[2] ?? 0
    pixels[offset + 1] = rgb[1] ?? 0
    pixels[offset + 2] = rgb[0] ?? 0
    pixels[offset + 3] = Math.round(alpha * 255)
  }
}

const header = Buffer.alloc(40)
header.writeUInt32LE(40, 0) // header size
header.writeInt32LE(SIZE, 4) // width
header.writeInt32LE(SIZE * 2, 8) // height: XOR bitmap + AND mask
header.writeUInt16LE(1, 12) // planes
header.writeUInt16LE(32, 14) // bits per pixel
header.writeUInt32LE(0, 16) // BI_RGB
header.writeUInt32LE(pixels.length, 20)
const andMask = Buffer.alloc(SIZE * 4) // 1 bit per pixel, rows padded to 32 bits; all 0 = use alpha
const image = Buffer.concat([header, pixels, andMask])

const dir = Buffer.alloc(6)
dir.writeUInt16LE(0, 0)
dir.writeUInt16LE(1, 2) // type: icon
dir.writeUInt16LE(1, 4) // one image
const entry = Buffer.alloc(16)
entry.writeUInt8(SIZE, 0)
entry.writeUInt8(SIZE, 1)
entry.writeUInt8(0, 2) // no palette
entry.writeUInt8(0, 3)
entry.writeUInt16LE(1, 4) // planes
entry.writeUInt16LE(32, 6) // bpp
entry.writeUInt32LE(image.length, 8)
entry.writeUInt32LE(dir.length + entry.length, 12)

const out = fileURLToPath(new URL('../public/favicon.ico', import.meta.url))
writeFileSync(out, Buffer.concat([dir, entry, image]))
console.log(`wrote ${out}`)
