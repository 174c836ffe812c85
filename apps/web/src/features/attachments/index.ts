// The panel (AttachmentsPanel) is not exported here: the note page loads it with a dynamic import of its own file.
export * from './rules'
export { apiErrorText, measurePicture, UploadCancelled, UploadError, uploadErrorMessage, uploadFile, type Upload } from './upload'
