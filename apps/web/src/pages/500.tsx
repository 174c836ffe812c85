import { ServerErrorScreen } from '../features/app-frame/ServerErrorScreen'

// Next renders this static page, in the app frame, when a page's server render fails unexpectedly (its own bare
// "500 Internal Server Error" otherwise). Its code is its own chunk, in no other page's first load.
export default ServerErrorScreen
