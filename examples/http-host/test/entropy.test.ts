import { entropyContract } from "@waybill/testkit"
import { nodeEntropy } from "../src/entropy.js"

// The host's pool must keep every promise of the port: no byte range handed out twice.
entropyContract("the host's pooled node:crypto entropy", nodeEntropy)
