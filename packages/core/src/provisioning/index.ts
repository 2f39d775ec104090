/**
 * @module provisioning
 *
 * The only door into `provisioning/`: other capability folders and the package entry import from here.
 */
export * as Registration from "./Registration.js"
export * as BusinessEmail from "./BusinessEmail.js"
export * as Provisioning from "./Provisioning.js"
export { ProvisioningStore } from "./ProvisioningStore.js"
