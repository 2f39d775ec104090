/**
 * Which IANA zones are legitimate for each US state and territory, and the few ZIPs whose
 * zone cannot be derived from their centroid at all.
 *
 * `tz-lookup` is lossy by design (its README: "expect errors near timezone borders"), and the
 * ZIP centroids are approximate, so a raw lookup sends border ZIPs to the neighbouring state's
 * or country's zone: Yuma to `America/Los_Angeles`, Sheldon IL to `America/Indiana/Indianapolis`,
 * Keyes OK to `America/Denver`, Gambell AK to `Asia/Anadyr`. Those are an hour (or a day) off,
 * and every local time at the stop would inherit the error. The adapter therefore accepts a raw
 * zone only if it is one the ZIP's state actually uses, and otherwise borrows the zone of the
 * nearest same-state ZIP that resolved cleanly (see `lookup.ts`).
 *
 * @internal
 */

const EASTERN = ["America/New_York"] as const
const CENTRAL = ["America/Chicago"] as const
const MOUNTAIN = ["America/Denver"] as const
const PACIFIC = ["America/Los_Angeles"] as const

/**
 * Zones in use per USPS state code (IANA `zone1970.tab` plus de facto practice where noted).
 * Military codes (`AA`, `AE`, `AP`) are deliberately absent: an APO/FPO/DPO ZIP routes mail to
 * a unit, not a place, so it has no meaningful local time and no courier stop. Absent states
 * resolve to none.
 *
 * @internal
 */
export const STATE_ZONES: ReadonlyMap<string, ReadonlyArray<string>> = new Map<string, ReadonlyArray<string>>([
  // Eastern only
  ...["CT", "DC", "DE", "GA", "MA", "MD", "ME", "NC", "NH", "NJ", "NY", "OH", "PA", "RI", "SC", "VA", "VT", "WV"].map(
    (s) => [s, EASTERN] as const
  ),
  // Central only
  ...["AR", "IA", "IL", "LA", "MN", "MO", "MS", "OK", "WI"].map((s) => [s, CENTRAL] as const),
  // Mountain only. Arizona is its own case below.
  ...["CO", "MT", "NM", "UT", "WY"].map((s) => [s, MOUNTAIN] as const),
  ...["CA", "NV", "WA"].map((s) => [s, PACIFIC] as const),
  // Split states
  /* Phenix City, Valley, Lanett and Smiths Station keep Eastern time de facto (they are part of
     the Columbus GA metro); the boundary data tz-lookup is built from records that, so keep it. */
  ["AL", ["America/Chicago", "America/New_York"]],
  ["FL", ["America/New_York", "America/Chicago"]],
  ["TN", ["America/Chicago", "America/New_York"]],
  ["KY", ["America/New_York", "America/Chicago", "America/Kentucky/Louisville", "America/Kentucky/Monticello"]],
  [
    "IN",
    [
      "America/Indiana/Indianapolis",
      "America/Chicago",
      "America/Kentucky/Louisville",
      "America/Indiana/Knox",
      "America/Indiana/Marengo",
      "America/Indiana/Petersburg",
      "America/Indiana/Tell_City",
      "America/Indiana/Vevay",
      "America/Indiana/Vincennes",
      "America/Indiana/Winamac"
    ]
  ],
  ["MI", ["America/Detroit", "America/Menominee"]],
  ["KS", ["America/Chicago", "America/Denver"]],
  ["NE", ["America/Chicago", "America/Denver"]],
  ["SD", ["America/Chicago", "America/Denver"]],
  ["TX", ["America/Chicago", "America/Denver"]],
  [
    "ND",
    [
      "America/Chicago",
      "America/Denver",
      "America/North_Dakota/Beulah",
      "America/North_Dakota/Center",
      "America/North_Dakota/New_Salem"
    ]
  ],
  ["ID", ["America/Boise", "America/Los_Angeles"]],
  ["OR", ["America/Los_Angeles", "America/Boise"]],
  /* Arizona keeps MST all year. The Navajo Nation (which observes DST) is handled by ZIP in
     `ZIP_ZONES`, not by tz-lookup: its compressed boundaries put Hopi villages, Fredonia and
     Duncan on Denver time too. */
  ["AZ", ["America/Phoenix"]],
  [
    "AK",
    [
      "America/Anchorage",
      "America/Juneau",
      "America/Sitka",
      "America/Yakutat",
      "America/Nome",
      "America/Metlakatla",
      "America/Adak"
    ]
  ],
  ["HI", ["Pacific/Honolulu"]],
  // Territories and freely associated states that have US ZIPs
  ["PR", ["America/Puerto_Rico"]],
  ["VI", ["America/St_Thomas"]],
  ["GU", ["Pacific/Guam"]],
  ["MP", ["Pacific/Saipan"]],
  ["AS", ["Pacific/Pago_Pago"]],
  ["PW", ["Pacific/Palau"]],
  ["FM", ["Pacific/Chuuk", "Pacific/Pohnpei", "Pacific/Kosrae"]],
  ["MH", ["Pacific/Majuro", "Pacific/Kwajalein"]]
])

/**
 * Arizona ZIPs whose post office lies inside the Navajo Nation, which observes daylight saving
 * time (unlike the rest of Arizona, and unlike the Hopi Reservation it surrounds: Hotevilla
 * 86030, Keams Canyon 86034, Kykotsmovi 86039, Polacca 86042 and Second Mesa 86043 stay on
 * `America/Phoenix`). ZIP areas do not follow the reservation boundary, so mixed ZIPs follow
 * the community that names them: Page 86040, Sanders 86512 and Chambers 86502 are off-reservation.
 *
 * @internal
 */
export const NAVAJO_NATION_AZ_ZIPS: ReadonlySet<string> = new Set([
  "86020", // Cameron
  "86031", // Indian Wells
  "86033", // Kayenta
  "86035", // Leupp
  "86044", // Tonalea
  "86045", // Tuba City
  "86053", // Kaibeto
  "86054", // Shonto
  "86503", // Chinle
  "86504", // Fort Defiance
  "86505", // Ganado
  "86506", // Houck
  "86507", // Lukachukai
  "86508", // Lupton
  "86510", // Pinon
  "86511", // Saint Michaels
  "86514", // Teec Nos Pos
  "86515", // Window Rock
  "86520", // Blue Gap
  "86535", // Dennehotso
  "86538", // Many Farms
  "86540", // Nazlini
  "86544", // Red Valley
  "86545", // Rock Point
  "86547", // Round Rock
  "86556" // Tsaile
])

/**
 * North Dakota ZIPs that tz-lookup puts on Mountain time but that keep Central time. ND's
 * Mountain zone is only the south-west, west and south of the Missouri; the zone line follows
 * the Montana border north of McKenzie County and jogs south of Watford City (at the Long X
 * bridge). Williston and its oil-patch neighbours are the ones that matter for deliveries.
 *
 * @internal
 */
export const NORTH_DAKOTA_CENTRAL: ReadonlyMap<string, string> = new Map<string, string>([
  // Divide County
  ["58730", "America/Chicago"], // Crosby
  ["58833", "America/Chicago"], // Ambrose
  ["58844", "America/Chicago"], // Fortuna
  // Williams County
  ["58795", "America/Chicago"], // Wildrose
  ["58801", "America/Chicago"], // Williston
  ["58802", "America/Chicago"], // Williston
  ["58803", "America/Chicago"], // Williston
  ["58830", "America/Chicago"], // Alamo
  ["58843", "America/Chicago"], // Epping
  ["58845", "America/Chicago"], // Grenora
  ["58849", "America/Chicago"], // Ray
  ["58853", "America/Chicago"], // Trenton
  ["58856", "America/Chicago"], // Zahl
  // McKenzie County north of the Long X bridge, and the Fort Berthold Reservation
  ["58831", "America/Chicago"], // Alexander
  ["58835", "America/Chicago"], // Arnegard
  ["58838", "America/Chicago"], // Cartwright
  ["58854", "America/Chicago"], // Watford City
  ["58757", "America/Chicago"], // Mandaree
  // Rural Morton County, on Central time since 2003 (IANA's own zone for it)
  ["58520", "America/North_Dakota/New_Salem"], // Almont
  ["58535", "America/North_Dakota/New_Salem"], // Flasher
  ["58563", "America/North_Dakota/New_Salem"], // New Salem
  ["58631", "America/North_Dakota/New_Salem"] // Glen Ullin
])

/**
 * ZIPs whose zone is fixed by hand because their centroid can't give it: the Navajo Nation and
 * North Dakota (above), Meade County KY (Eastern, but the nearest clean ZIPs are across the line
 * in Breckinridge County, which is Central), West Wendover NV (legally on Mountain time),
 * Pago Pago (tz-lookup says `Pacific/Apia`, a calendar day away) and Wake Island (filed under HI
 * but 22 hours ahead of Honolulu).
 *
 * @internal
 */
export const ZIP_ZONES: ReadonlyMap<string, string> = new Map<string, string>([
  ...[...NAVAJO_NATION_AZ_ZIPS].map((zip) => [zip, "America/Denver"] as const),
  ...NORTH_DAKOTA_CENTRAL,
  ["40104", "America/New_York"], // Battletown KY
  ["40157", "America/New_York"], // Payneville KY
  ["40161", "America/New_York"], // Rhodelia KY
  ["89883", "America/Denver"], // West Wendover NV
  ["96799", "Pacific/Pago_Pago"], // American Samoa
  ["96898", "Pacific/Wake"] // Wake Island
])
