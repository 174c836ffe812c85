export { StartScreen } from './StartScreen'
