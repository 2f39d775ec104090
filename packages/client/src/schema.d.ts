/**
 * The /api/v1 types, generated from docs/api/openapi.json by openapi-typescript.
 * Do not edit: run `pnpm --filter @waybill/client generate` (test/schema.test.ts checks it).
 */
export interface paths {
    "/api/v1/order/json/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create shipments
         * @description Books one or more shipments (interface 4.1). The key: Authorization: Bearer, else data.token, else data.key. One invalid shipment is a 400; with several, each invalid one carries its own errors and the valid ones are booked.
         */
        post: operations["createShipments"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/order/docs/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Order documents metadata
         * @description Documents of orders the key may read, with download links (interface 4.2). HTTPS only. Always inspect error, even with HTTP 200. Precedence: search_value, then id, then control_no.
         */
        get: operations["getOrderDocuments"];
        put?: never;
        /**
         * Order documents metadata
         * @description Documents of orders the key may read, with download links (interface 4.2). HTTPS only. Always inspect error, even with HTTP 200. Precedence: search_value, then id, then control_no. Parameters may come in a urlencoded form and in the query.
         */
        post: operations["postOrderDocuments"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/order/docs/download/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Download a document
         * @description One document's file (interface 4.3). The ticket is the credential; use the uri exactly as given. Errors are plain text. Every answer is Cache-Control: no-store.
         */
        get: operations["downloadDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * Download a document
         * @description One document's file (interface 4.3). The ticket is the credential; use the uri exactly as given. Errors are plain text. Every answer is Cache-Control: no-store.
         */
        head: operations["headDocument"];
        patch?: never;
        trace?: never;
    };
    "/api/v1/order/cancel/json/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Cancel a shipment
         * @description Cancels a shipment no driver has been assigned to yet (interface 4.4). Errors use the six messages of interface 7.4.
         */
        get: operations["cancelShipment"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/utilities/quote/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Quote
         * @description List rates without a key, the account's negotiated rates with one (interface 4.6). Each row is priced as booking would price it.
         */
        get: operations["quote"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/utilities/track/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Track a shipment
         * @description The coarse view for anyone with the tracking number, the precise view with the owner's key (interface 4.6). Unknown and malformed numbers get 200 with No records found.
         */
        get: operations["track"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/accountsetup/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Account provisioning (beta)
         * @description One step of account provisioning (interface 4.5), chosen by action, with urlencoded fields. See docs/provisioning.md for each action's fields and answer.
         */
        post: operations["accountSetup"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/accountsetup/verify/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The verification link's confirm page
         * @description GET shows a page with a button (mail scanners that prefetch links cannot use the link up); the button POSTs the token, which verifies the e-mail address.
         */
        get: operations["verifyLinkPage"];
        put?: never;
        /**
         * Confirm the e-mail address
         * @description GET shows a page with a button (mail scanners that prefetch links cannot use the link up); the button POSTs the token, which verifies the e-mail address.
         */
        post: operations["verifyLink"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document */
        get: operations["openApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description data of a provisioning answer, by action. */
        AccountSetupData: components["schemas"]["PreRegisterData"] | components["schemas"]["ProvisioningMessageData"] | components["schemas"]["ResendData"] | components["schemas"]["CheckData"] | components["schemas"]["StartData"] | components["schemas"]["Step1Data"] | components["schemas"]["PaymentCheckData"];
        /** @description A successful answer: data is AccountSetupData, error is null. */
        AccountSetupDataEnvelope: {
            data: components["schemas"]["AccountSetupData"];
            error: null;
        };
        AccountSetupForm: {
            /** @description pre-register, pre-register-verify, pre-register-check */
            email_address?: string;
            /** @description pre-register */
            password?: string;
            /** @description pre-register (ignored) */
            es_code?: string;
            /** @description The wait_idx: pre-register-verify, pre-register-resend, pre-register-check */
            idx?: string;
            /** @description The code from the e-mail: pre-register-verify */
            verify_code?: string;
            /** @description start, step1, step2, the payment check */
            validation_key?: string;
            /** @description step1 */
            first_name?: string;
            /** @description step1 */
            last_name?: string;
            /** @description step1 */
            customer_name?: string;
            /** @description step1 */
            local_addr1?: string;
            /** @description step1 */
            local_city?: string;
            /** @description step1 */
            local_state?: string;
            /** @description step1 */
            local_zip_postal?: string;
            /** @description step1 */
            local_phone?: string;
            /** @description step2 */
            billing_addr2?: string;
            /** @description step2 */
            billing_city?: string;
            /** @description step2 */
            billing_state?: string;
            /** @description step2 */
            billing_zip_postal?: string;
        } & {
            [key: string]: unknown;
        };
        /** @description data of a cancel answer: {"result": "success"}, or the cancel provider's payload for accounts in provider mode (2.5). */
        CancelData: {
            /** @description success */
            result?: string;
        } & {
            [key: string]: unknown;
        };
        /** @description A successful answer: data is CancelData, error is null. */
        CancelDataEnvelope: {
            data: components["schemas"]["CancelData"];
            error: null;
        };
        /** @description The charge and its parts, in dollars. */
        ChargeBreakdown: {
            transport: number;
            weight: number;
            stops: number;
            fuel: number;
            extras: number;
            discount: number;
            total: number;
        };
        /** @description pre-register-check */
        CheckData: {
            /** @enum {string} */
            result: "success";
            /** @enum {string} */
            is_validated: "Y";
            validation_key: string;
        };
        CoarseEvent: {
            type: string;
            occurred_at: string;
        };
        /** @description A stop at ZIP precision (centre rounded to 2 decimals). */
        CoarseStop: {
            seq: number;
            role: components["schemas"]["StopRole"];
            status: components["schemas"]["StopStatus"];
            zip: string;
            city: string;
            state: string;
            latitude: number;
            longitude: number;
        };
        /** @description What anyone with the tracking number sees. */
        CoarseView: {
            track_no: string;
            /** @enum {string} */
            detail: "coarse";
            status: components["schemas"]["ShipmentState"];
            service_type: string;
            vehicle_type: string;
            estimated_delivery: string;
            guaranteed_delivery: string;
            destination_tz: string;
            stops: components["schemas"]["CoarseStop"][];
            events: components["schemas"]["CoarseEvent"][];
        };
        /** @description data of a create-shipments answer (2.3). */
        CreateShipmentsData: {
            jsonstrn: string;
            shipments_with_errors: components["schemas"]["Int"];
            shipments: components["schemas"]["ShipmentResult"][];
        };
        /** @description A successful answer: data is CreateShipmentsData, error is null. */
        CreateShipmentsDataEnvelope: {
            data: components["schemas"]["CreateShipmentsData"];
            error: null;
        };
        CreateShipmentsForm: {
            /** @description The JSON text of a CreateShipmentsRequest. */
            data: string;
        } & {
            [key: string]: unknown;
        };
        /** @description The create-shipments body (interface 2.2). */
        CreateShipmentsRequest: {
            data: {
                /** @description API key, unless an Authorization: Bearer header is sent. */
                token?: string;
                /** @description Alias of token. */
                key?: string;
                /** @description Sender's correlation id, echoed in the answer (at most 255 characters). */
                jsonstrn?: (string | number) | null;
                /**
                 * minItems(1)
                 * @description an array of at least 1 item(s)
                 */
                shipments: components["schemas"]["ShipmentInput"][];
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        DocumentsData: {
            orders: components["schemas"]["OrderDocuments"][];
        };
        /** @description A successful answer: data is DocumentsData, error is null. */
        DocumentsDataEnvelope: {
            data: components["schemas"]["DocumentsData"];
            error: null;
        };
        DocumentsParams: {
            /** @description Order number(s); a comma-separated list is allowed. */
            control_no?: string;
            /**
             * @description Which field search_value is matched against.
             * @enum {string}
             */
            search_field?: "control_no" | "customer_reference" | "invoice_no";
            /** @description Value(s) for search_field; a comma always separates values. */
            search_value?: string;
            /** @description Legacy alias of search_value; without search_field it matches any of the three fields. */
            id?: string;
            /** @description API key (form or query); prefer the Authorization header. */
            key?: string;
            /** @description Legacy query name of key. */
            apikey?: string;
            /** @description Legacy query name of key. */
            token?: string;
        } & {
            [key: string]: unknown;
        };
        /** @description The error member of a failed answer (interface 2.1). */
        Error: {
            /** @description What went wrong, in the interface's words. */
            message: string;
            exception: null;
        };
        /** @description A failed answer: data is null, error holds the message. */
        ErrorEnvelope: {
            data: null;
            error: components["schemas"]["Error"];
        };
        /**
         * int
         * @description an integer
         */
        Int: number;
        OrderDocument: {
            /** @description bol, pickedup-package, delivered-package, signature; other types may appear. */
            type: string;
            /** @description One-based sequence within its batch. */
            page: string;
            /** @description Source identifier; a signature's may hold the recipient name. */
            id: string;
            /** @description Temporary download link (15 minutes); opaque, a bearer credential for this one document. */
            uri: string;
        };
        /** @description One order and its visible documents (2.4). */
        OrderDocuments: {
            control_no: string;
            reference: string;
            requested_by: string;
            invoice: string;
            documents: components["schemas"]["OrderDocument"][];
        };
        /** @description registered-with-<provider>-check */
        PaymentCheckData: {
            /** @enum {string} */
            result: "success";
            provider: string;
            /** @enum {string} */
            registered: "Y" | "N";
        };
        PieceDetail: {
            piece_no: string;
            piece_weight: string;
            length: string;
            width: string;
            height: string;
            pc: string;
            id: string;
            description: string;
        };
        /** @description One row of piece_details (interface 2.2). */
        PieceInput: {
            piece_no?: (string | number) | null;
            piece_weight?: (string | number) | null;
            length?: (string | number) | null;
            width?: (string | number) | null;
            height?: (string | number) | null;
            pc?: (string | number) | null;
            id?: (string | number) | null;
            description?: (string | number) | null;
        } & {
            [key: string]: unknown;
        };
        Place: {
            zip: string;
            city: string;
            state: string;
        };
        /** @description pre-register */
        PreRegisterData: {
            /** @enum {string} */
            result: "success";
            message: string;
            wait_idx: string;
            /** @description ISO 8601 UTC end of the verification window. */
            verify_expires: string;
            /** @enum {string} */
            is_validated: "N";
        };
        PreciseEvent: {
            id: string;
            type: string;
            sequence: number;
            occurred_at: string;
            data: {
                [key: string]: unknown;
            };
        };
        PreciseStop: {
            seq: number;
            role: components["schemas"]["StopRole"];
            stop_id: number | null;
            status: components["schemas"]["StopStatus"];
            name: string;
            address: string;
            city: string;
            state: string;
            zip: string;
            contact_name: string;
            phone_no: string;
            stop_note: string;
            latitude: number;
            longitude: number;
            eta: string;
            tz: string;
        };
        /** @description What the owner's key (or a linked account's) sees. */
        PreciseView: {
            track_no: string;
            /** @enum {string} */
            detail: "precise";
            status: components["schemas"]["ShipmentState"];
            livemode: boolean;
            service_type: string;
            vehicle_type: string;
            pieces: number;
            weight: number;
            billing_reference: string;
            contact: string;
            phone: string;
            email: string;
            signature_required: boolean;
            liftgate_required: boolean;
            pickup_instructions: string;
            deliver_instructions: string;
            estimated_delivery: string;
            guaranteed_delivery: string;
            destination_tz: string;
            stops: components["schemas"]["PreciseStop"][];
            piece_details: components["schemas"]["PieceDetail"][];
            events: components["schemas"]["PreciseEvent"][];
            documents: components["schemas"]["TrackDocument"][];
        };
        /** @description pre-register-verify, step2 */
        ProvisioningMessageData: {
            /** @enum {string} */
            result: "success";
            message: string;
        };
        QuoteData: {
            origin: components["schemas"]["Place"];
            destination: components["schemas"]["Place"];
            miles: number;
            weight: number;
            pieces: number;
            stops: number;
            /** @enum {string} */
            rates: "list" | "negotiated";
            quotes: components["schemas"]["QuoteRow"][];
        };
        /** @description A successful answer: data is QuoteData, error is null. */
        QuoteDataEnvelope: {
            data: components["schemas"]["QuoteData"];
            error: null;
        };
        QuoteRow: {
            service_type: string;
            vehicle_type: string;
            estimated_delivery: string;
            guaranteed_delivery: string;
            destination_tz: string;
            estimated_charge: number;
            charge: components["schemas"]["ChargeBreakdown"];
        };
        /** @description pre-register-resend */
        ResendData: {
            /** @enum {string} */
            result: "success";
            message: string;
            verify_expires: string;
            /** @enum {string} */
            is_validated: "N";
        };
        /** @description One shipment (interface 2.2). Required: Contact, Phone, Pieces, Weight, ServiceType, VehicleType, Pickupdate, Deliverdate, and Pickup*\/Deliver* fields unless multistop_route has 3 or more stops. Missing or invalid fields are reported by name in the answer. */
        ShipmentInput: {
            Contact?: (string | number) | null;
            Phone?: (string | number) | null;
            PickupName?: (string | number) | null;
            PickupAddress?: (string | number) | null;
            PickupCity?: (string | number) | null;
            PickupState?: (string | number) | null;
            PickupZip?: (string | number) | null;
            DeliverName?: (string | number) | null;
            DeliverAddress?: (string | number) | null;
            DeliverCity?: (string | number) | null;
            DeliverState?: (string | number) | null;
            DeliverZip?: (string | number) | null;
            Pieces?: (string | number) | null;
            Weight?: (string | number) | null;
            ServiceType?: (string | number) | null;
            VehicleType?: (string | number) | null;
            Pickupdate?: (string | number) | null;
            Deliverdate?: (string | number) | null;
            Email?: (string | number) | null;
            BillingReference?: (string | number) | null;
            SignatureReq?: (string | number) | null;
            LiftgateReq?: (string | number) | null;
            PickupSpecinst?: (string | number) | null;
            DeliverSpecinst?: (string | number) | null;
            multistop_route?: components["schemas"]["StopInput"][] | null;
            piece_details?: components["schemas"]["PieceInput"][] | null;
        } & {
            [key: string]: unknown;
        };
        /** @description One shipment of the answer, in request order (interface 2.3); errors is empty on success. */
        ShipmentResult: {
            order: components["schemas"]["Int"];
            /** @enum {string} */
            result: "success" | "error";
            track_no: string;
            billing_reference: string;
            service_type: string;
            vehicle_type: string;
            estimated_delivery: string;
            guaranteed_delivery: string;
            destination_tz: string;
            estimated_charge: number;
            errors: string[];
        };
        /** @enum {string} */
        ShipmentState: "booked" | "assigned" | "picked_up" | "in_transit" | "attempt_failed" | "returning" | "delivered" | "returned" | "canceled" | "failed";
        /** @description start */
        StartData: {
            /** @enum {string} */
            result: "success";
            customer_no: string;
            frequent_caller_id: string;
            /** @enum {string} */
            has_firmographics: "Y" | "N";
        };
        /** @description step1 */
        Step1Data: {
            /** @enum {string} */
            result: "success";
            message: string;
            customer_no: string;
            user: {
                email_address: string;
                first_name: string;
                last_name: string;
                /** @enum {string} */
                status: "active";
            };
            /** @description Only in the answer that activated the account: the keys are shown once. */
            api_keys?: {
                production: string;
                test: string;
            };
        };
        /** @description One stop of multistop_route (interface 2.2). Stops are processed in ascending stop_id. */
        StopInput: {
            stop_id?: (string | number) | null;
            name?: (string | number) | null;
            address?: (string | number) | null;
            city?: (string | number) | null;
            state?: (string | number) | null;
            zip?: (string | number) | null;
            contact_name?: (string | number) | null;
            phone_no?: (string | number) | null;
            stop_note?: (string | number) | null;
            update_address_book?: (string | number) | null;
            location_idx_key?: (string | number) | null;
        } & {
            [key: string]: unknown;
        };
        /** @enum {string} */
        StopRole: "pickup" | "intermediate" | "delivery";
        /** @enum {string} */
        StopStatus: "pending" | "arrived" | "completed" | "attempt_failed" | "skipped";
        TrackData: components["schemas"]["CoarseView"] | components["schemas"]["PreciseView"];
        /** @description A successful answer: data is TrackData, error is null. */
        TrackDataEnvelope: {
            data: components["schemas"]["TrackData"];
            error: null;
        };
        TrackDocument: {
            type: string;
            page: string;
            id: string;
            /** @enum {string} */
            content_type: "application/pdf" | "image/jpeg" | "image/png" | "image/gif" | "image/tiff";
        };
        VerifyLinkParams: {
            /** @description The verification link's token (GET shows a confirm page; POST verifies). */
            token?: string;
        } & {
            [key: string]: unknown;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description Seconds to wait before retrying. */
        "Retry-After": number;
        /** @description Bearer realm="waybill" (with error="invalid_token" for a bad key). */
        "WWW-Authenticate": string;
        /** @description Where the caller stands, e.g. "key";r=599;t=42 (draft-ietf-httpapi-ratelimit-headers). */
        RateLimit: string;
        /** @description The policy, e.g. "key";q=600;w=60. */
        "RateLimit-Policy": string;
        /** @description true on an answer replayed for a repeated Idempotency-Key (nothing was done again). */
        "Idempotent-Replayed": "true";
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    createShipments: {
        parameters: {
            query?: never;
            header?: {
                /** @description 1-255 printable ASCII characters. Within 24 hours, the same key with the same request answers the first answer again (Idempotent-Replayed: true) and does nothing; scope: the key's account and mode. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateShipmentsRequest"];
                "application/x-www-form-urlencoded": components["schemas"]["CreateShipmentsForm"];
            };
        };
        responses: {
            /** @description The shipments' results. */
            200: {
                headers: {
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreateShipmentsDataEnvelope"];
                };
            };
            /** @description A body or a single shipment that cannot be used. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No key, or a key that does not authenticate. */
            401: {
                headers: {
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A blocked address, or an address outside the account's IP allowlist. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A request with the same Idempotency-Key is still running; nothing was done. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The body is larger than the configured limit. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Neither JSON nor a urlencoded form. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The Idempotency-Key was used with a different request. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Over a rate limit. */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Storage or service trouble; retry with backoff. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getOrderDocuments: {
        parameters: {
            query?: {
                /** @description Order number(s); a comma-separated list is allowed. */
                control_no?: string;
                /** @description Which field search_value is matched against. */
                search_field?: "control_no" | "customer_reference" | "invoice_no";
                /** @description Value(s) for search_field; a comma always separates values. */
                search_value?: string;
                /** @description Legacy alias of search_value; without search_field it matches any of the three fields. */
                id?: string;
                /** @description API key (form or query); prefer the Authorization header. */
                key?: string;
                /** @description Legacy query name of key. */
                apikey?: string;
                /** @description Legacy query name of key. */
                token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The orders; or an error for a missing or invalid key or no authorized match. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentsDataEnvelope"] | components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A missing or invalid lookup, a limit, a repeated key, or plain HTTP. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A blocked address, or an address outside the account's IP allowlist. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The form is too large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Over a rate limit. */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Storage or service trouble; retry with backoff. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    postOrderDocuments: {
        parameters: {
            query?: {
                /** @description Order number(s); a comma-separated list is allowed. */
                control_no?: string;
                /** @description Which field search_value is matched against. */
                search_field?: "control_no" | "customer_reference" | "invoice_no";
                /** @description Value(s) for search_field; a comma always separates values. */
                search_value?: string;
                /** @description Legacy alias of search_value; without search_field it matches any of the three fields. */
                id?: string;
                /** @description API key (form or query); prefer the Authorization header. */
                key?: string;
                /** @description Legacy query name of key. */
                apikey?: string;
                /** @description Legacy query name of key. */
                token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/x-www-form-urlencoded": components["schemas"]["DocumentsParams"];
            };
        };
        responses: {
            /** @description The orders; or an error for a missing or invalid key or no authorized match. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DocumentsDataEnvelope"] | components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A missing or invalid lookup, a limit, a repeated key, or plain HTTP. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A blocked address, or an address outside the account's IP allowlist. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The form is too large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Over a rate limit. */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Storage or service trouble; retry with backoff. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    downloadDocument: {
        parameters: {
            query: {
                /** @description The ticket of a uri the documents lookup returned; use the uri exactly as given. */
                ticket: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file (HEAD: its fields only), saved rotation applied. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/pdf": string;
                    "image/jpeg": string;
                    "image/png": string;
                    "image/gif": string;
                    "image/tiff": string;
                };
            };
            /** @description An invalid or expired ticket, lost access, or a blocked address. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description The document is no longer available, or its file is missing. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description Temporary trouble. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
        };
    };
    headDocument: {
        parameters: {
            query: {
                /** @description The ticket of a uri the documents lookup returned; use the uri exactly as given. */
                ticket: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file (HEAD: its fields only), saved rotation applied. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/pdf": string;
                    "image/jpeg": string;
                    "image/png": string;
                    "image/gif": string;
                    "image/tiff": string;
                };
            };
            /** @description An invalid or expired ticket, lost access, or a blocked address. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description The document is no longer available, or its file is missing. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            /** @description Temporary trouble. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
        };
    };
    cancelShipment: {
        parameters: {
            query: {
                /** @description Tracking number from booking: 6 to 8 digits. */
                id: string;
                /** @description API key; or an Authorization: Bearer header, which then decides alone. */
                key?: string;
            };
            header?: {
                /** @description 1-255 printable ASCII characters. Within 24 hours, the same key with the same request answers the first answer again (Idempotent-Replayed: true) and does nothing; scope: the key's account and mode. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Canceled. */
            200: {
                headers: {
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CancelDataEnvelope"];
                };
            };
            /** @description A missing or malformed tracking number, or an unusable Idempotency-Key. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No key, or a key that does not authenticate. */
            401: {
                headers: {
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A blocked address, or an address outside the account's IP allowlist. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Already canceled, past the point of cancelling, or a request with the same Idempotency-Key still running. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The Idempotency-Key was used with a different request. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Over a rate limit. */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The cancel provider refused or failed (provider mode). */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Storage or service trouble; retry with backoff. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    quote: {
        parameters: {
            query: {
                /** @description Pickup ZIP: 5 digits or ZIP+4. */
                origin: string;
                /** @description Delivery ZIP: 5 digits or ZIP+4. */
                destination: string;
                /** @description Total pounds, as booking's Weight (15, 15 lbs, 1,200). */
                weight: string;
                /** @description Total pieces (default 1). */
                pieces?: string;
                /** @description Price only this service (code or alias). */
                service?: string;
                /** @description Price only this vehicle (code or alias). */
                vehicle?: string;
                /** @description Stops including pickup and delivery, 2 to the configured maximum (default 2). */
                stops?: string;
                /** @description Y / N: add the liftgate fee. */
                liftgate?: string;
                /** @description Y / N: add the signature fee. */
                signature?: string;
                /** @description API key for negotiated rates; or an Authorization: Bearer header. */
                key?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The priced options. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["QuoteDataEnvelope"];
                };
            };
            /** @description Invalid parameters (each problem named), or a repeated key. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No key, or a key that does not authenticate. */
            401: {
                headers: {
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A blocked address, or an address outside the account's IP allowlist. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Over a rate limit. */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Storage or service trouble; retry with backoff. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    track: {
        parameters: {
            query: {
                /** @description The tracking number. */
                idx: string;
                /** @description The owner's API key for the precise view; or an Authorization: Bearer header. */
                key?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The shipment's view, or No records found. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrackDataEnvelope"] | components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A repeated key. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No key, or a key that does not authenticate. */
            401: {
                headers: {
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A blocked address, or an address outside the account's IP allowlist. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Over a rate limit. */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Storage or service trouble; retry with backoff. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    accountSetup: {
        parameters: {
            query: {
                /** @description The provisioning step. */
                action: ("pre-register" | "pre-register-verify" | "pre-register-resend" | "pre-register-check" | "start" | "step1" | "step2") | string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/x-www-form-urlencoded": components["schemas"]["AccountSetupForm"];
            };
        };
        responses: {
            /** @description The step's answer (see each action). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AccountSetupDataEnvelope"];
                };
            };
            /** @description Missing or invalid fields, a wrong or expired code, or an unknown action. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The validation_key is not valid. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A blocked address, a locked registration, or an e-mail not verified yet. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Provisioning is disabled on this server. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The step does not fit the registration's stage. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description The form is too large. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Not a urlencoded form. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Too many attempts, e-mails or registrations. */
            429: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description E-mail, storage or configuration trouble; retry. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    verifyLinkPage: {
        parameters: {
            query?: {
                /** @description The verification link's token (GET shows a confirm page; POST verifies). */
                token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The confirm page. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description The link is not valid, has expired or was already used. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description Provisioning is disabled on this server. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Storage trouble. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    verifyLink: {
        parameters: {
            query?: {
                /** @description The verification link's token (GET shows a confirm page; POST verifies). */
                token?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/x-www-form-urlencoded": components["schemas"]["VerifyLinkParams"];
            };
        };
        responses: {
            /** @description Verified. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description The link is not valid, has expired or was already used. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description Provisioning is disabled on this server. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description Storage trouble. */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    openApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
        };
    };
}
