// How many deliveries are stored (from the count store: no scan).
MATCH (d:Delivery)
RETURN count(d) AS n
