import { Entropy } from "@waybill/core"
import { entropyContract } from "../src/index.js"

entropyContract("core's Entropy.webCrypto", Entropy.webCrypto)
