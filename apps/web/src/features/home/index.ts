export { HomeScreen } from './HomeScreen'
export { StartScreen } from './StartScreen'
