export { AppFrame } from './AppFrame'
export { PROGRESS_BAR_Z_INDEX, ProgressBar } from './ProgressBar'
export { NotFoundScreen } from './NotFoundScreen'
