/** Numbers the route table shares with the code behind its routes, in a leaf the route table imports without the domain. */

/**
 * Largest archive accepted through the API: a Lambda request holds 6 MB, and API Gateway sends
 * binary bodies base64-encoded (4/3 larger).
 */
export const archiveUploadLimitBytes = 4 * 1024 * 1024;
