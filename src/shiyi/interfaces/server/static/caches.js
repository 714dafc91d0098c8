// The health panel's cache hit rates: result, embedding, summary and system-prompt caches
// of the serving process (GET /v1/memory/health).
import { api } from "./api.js";
import { h } from "./ui.js";

export async function loadCaches() {
  const { detail } = await api("GET", "/v1/memory/health");
  const rates = (detail && detail.caches) || [];
  document.querySelector("#cache-rates").replaceChildren(
    ...rates.flatMap((rate) => [
      h("dt", {}, rate.name),
      h(
        "dd",
        { "data-cache": rate.name },
        rate.rate === null
          ? "no lookups yet"
          : `${(100 * rate.rate).toFixed(1)} % (${rate.hits} of ${rate.hits + rate.misses})`,
      ),
    ]),
  );
}
