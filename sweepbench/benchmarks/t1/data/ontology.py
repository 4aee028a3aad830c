"""The T1 ontologies: the closed vocabularies every domain draws its values from.

Sizes follow the paper's Appendix A.2 where it gives them (9 attraction types, 23 bar types,
51 cafe item names, 13 cruise lines, 14 destinations, 15 ports, 6 cabin categories, 66
cuisines, 6 vessel types, 8 show categories, 18 venue types, 3 seating areas, 3 vehicle
categories). The names themselves are sweepbench's own.
"""

from __future__ import annotations

DOMAINS = ("attraction", "bar", "cafe", "cruise", "dessert", "flight", "food_and_dining", "hotel",
           "kayak_rental", "live_show", "vehicle_rental")

ATTRACTION_TYPES = ("Art", "Historical", "Tourist", "Social", "Food", "Sports", "Tours", "Culture",
                    "Scenery")
ATTRACTION_NOUNS = {
    "Art": ("Museum of Art", "Sculpture Garden", "Art Gallery", "Mural Walk", "Glass Studio"),
    "Historical": ("Historic District", "Old Fort", "Heritage Museum", "Lighthouse", "Founders House"),
    "Tourist": ("Observation Deck", "Visitor Center", "Pier", "Botanical Garden", "Aquarium"),
    "Social": ("Town Square", "Community Plaza", "Public Market", "Festival Grounds", "Promenade"),
    "Food": ("Food Hall", "Farmers Market", "Chocolate Factory", "Winery", "Brewery Tour"),
    "Sports": ("Stadium", "Ballpark", "Sports Hall of Fame", "Ice Arena", "Speedway"),
    "Tours": ("River Cruise", "Trolley Tour", "Walking Tour", "Ghost Tour", "Bike Tour"),
    "Culture": ("Cultural Center", "Performing Arts Hall", "History Center", "Library", "Playhouse"),
    "Scenery": ("State Park", "Overlook", "Waterfront Trail", "Nature Preserve", "Canyon Trail"),
}

BAR_TYPES = ("Speakeasy", "Dive Bar", "Sports Bar", "Wine Bar", "Gastropub", "Rooftop Bar",
             "Cocktail Lounge", "Tiki Bar", "Brewpub", "Irish Pub", "Whiskey Bar", "Beer Garden",
             "Karaoke Bar", "Piano Bar", "Jazz Bar", "Hotel Bar", "Neighborhood Bar", "Tapas Bar",
             "Sake Bar", "Cigar Lounge", "Nightclub", "Taproom", "Mezcal Bar")
BAR_FLAGS = ("has_happy_hour", "has_live_music", "has_pool_tables", "has_valet_parking",
             "has_signature_mixology", "has_dance_floor", "has_karaoke", "has_trivia_night",
             "has_sports_screens", "has_outdoor_seating", "has_craft_beer", "has_food_menu",
             "is_wheelchair_accessible", "has_vip_room")

STAR_SEGMENTS = ("budget", "standard", "premium", "luxury")

CAFE_TYPES = ("Coffee Shop", "Bubble Tea")
CAFE_FLAGS = ("has_light_roast", "has_dark_roast", "has_decaf", "has_oat_milk", "has_almond_milk",
              "has_soy_milk", "has_sugar_free_options", "has_vanilla_syrup", "has_caramel_syrup",
              "has_black_tea", "has_green_tea", "has_tapioca_pearls", "has_wifi",
              "has_outdoor_seating")
COFFEE_ITEMS = ("Espresso", "Americano", "Latte", "Cappuccino", "Macchiato", "Flat White", "Mocha",
                "Cortado", "Cold Brew", "Pour Over", "Drip Coffee", "Iced Latte", "Nitro Cold Brew",
                "Chai Latte", "Matcha Latte", "Hot Chocolate", "Affogato", "Caramel Macchiato",
                "Vanilla Latte", "Red Eye")
PASTRY_ITEMS = ("Croissant", "Blueberry Muffin", "Scone", "Bagel", "Cinnamon Roll", "Banana Bread",
                "Chocolate Chip Cookie", "Almond Croissant", "Avocado Toast", "Breakfast Sandwich")
TEA_ITEMS = ("Classic Milk Tea", "Taro Milk Tea", "Brown Sugar Boba", "Matcha Milk Tea",
             "Thai Milk Tea", "Jasmine Green Tea", "Oolong Milk Tea", "Mango Fruit Tea",
             "Passion Fruit Green Tea", "Strawberry Slush", "Honeydew Milk Tea", "Lychee Fruit Tea",
             "Wintermelon Tea", "Coconut Milk Tea", "Peach Oolong", "Black Sugar Latte",
             "Lemon Black Tea", "Grapefruit Green Tea", "Mango Smoothie", "Cheese Foam Black Tea",
             "Hokkaido Milk Tea")
CAFE_ITEMS = COFFEE_ITEMS + PASTRY_ITEMS + TEA_ITEMS  # 51
DIETARY_TAGS = ("vegan", "vegetarian", "gluten_free", "dairy_free", "nut_free", "low_sugar")
ALLERGENS = ("milk", "eggs", "wheat", "soy", "tree_nuts", "peanuts")

CRUISE_LINES = ("Azure Horizon Cruises", "Northern Star Line", "Coral Crown Cruises",
                "Meridian Sea Voyages", "Silver Tide Cruises", "Harborlight Cruise Line",
                "Trade Wind Cruises", "Polaris Ocean Line", "Sunward Cruises", "Compass Rose Cruises",
                "Bluewater Odyssey", "Seafarer Grand Cruises", "Pacific Pearl Line")
SHIP_WORDS = ("Aurora", "Serenity", "Voyager", "Radiance", "Harmony", "Odyssey", "Equinox",
              "Majesty", "Solstice", "Tranquility", "Navigator", "Horizon", "Celeste", "Liberty",
              "Splendor", "Meridian", "Mariner", "Zephyr", "Halcyon", "Triumph")
CRUISE_DESTINATIONS = ("Alaska", "Caribbean - Eastern", "Caribbean - Western", "Caribbean - Southern",
                       "Bahamas", "Bermuda", "Mexican Riviera", "Hawaii", "Pacific Coastal",
                       "New England & Canada", "Transatlantic", "Panama Canal", "Mediterranean",
                       "Northern Europe")
DOMESTIC_DESTINATIONS = ("Alaska", "Hawaii", "Pacific Coastal")  # no passport needed
CRUISE_PORTS = ("Miami", "Fort Lauderdale", "Port Canaveral", "Tampa", "Galveston", "New Orleans",
                "Seattle", "Los Angeles", "San Diego", "San Francisco", "New York", "Boston",
                "Baltimore", "Honolulu", "Seward")
PORTS_BY_DESTINATION = {
    "Alaska": ("Seattle", "Seward", "San Francisco"),
    "Caribbean - Eastern": ("Miami", "Fort Lauderdale", "Port Canaveral", "New York"),
    "Caribbean - Western": ("Miami", "Galveston", "New Orleans", "Tampa", "Fort Lauderdale"),
    "Caribbean - Southern": ("Miami", "Fort Lauderdale", "Port Canaveral"),
    "Bahamas": ("Miami", "Port Canaveral", "Fort Lauderdale", "Baltimore"),
    "Bermuda": ("New York", "Boston", "Baltimore"),
    "Mexican Riviera": ("Los Angeles", "San Diego"),
    "Hawaii": ("Honolulu", "Los Angeles"),
    "Pacific Coastal": ("Seattle", "San Francisco", "Los Angeles"),
    "New England & Canada": ("Boston", "New York"),
    "Transatlantic": ("New York", "Fort Lauderdale", "Boston"),
    "Panama Canal": ("Fort Lauderdale", "Miami", "Los Angeles"),
    "Mediterranean": ("New York", "Fort Lauderdale"),
    "Northern Europe": ("New York", "Boston"),
}
CABIN_TYPES = ("interior", "ocean_view", "balcony", "mini_suite", "suite", "penthouse")
CRUISE_FLAGS = ("has_casino", "has_spa", "has_kids_club", "has_water_park", "has_broadway_shows",
                "is_adults_only", "has_specialty_dining", "has_wifi_package")

DESSERT_TYPES = ("Ice Cream Parlor", "Gelateria", "Patisserie", "Bakery", "Creperie", "Donut Shop",
                 "Frozen Yogurt", "Cupcake Shop", "Chocolatier", "Dessert Cafe")
BAKERY_TYPES = ("Bakery", "Patisserie", "Cupcake Shop", "Donut Shop")
DESSERT_FLAGS = ("has_ice_cream", "has_gelato", "has_pastries", "has_crepes", "has_cakes",
                 "has_cookies", "has_donuts", "has_vegan_options", "has_gluten_free_options",
                 "has_dairy_free_options", "has_nut_free_options", "has_custom_orders",
                 "has_delivery", "has_seating")
DESSERT_MENUS = {
    "Ice Cream Parlor": ("Vanilla Bean Scoop", "Chocolate Fudge Sundae", "Banana Split",
                         "Mint Chip Cone", "Strawberry Milkshake", "Cookie Dough Scoop",
                         "Rocky Road Cone", "Ice Cream Sandwich", "Tiramisu"),
    "Gelateria": ("Pistachio Gelato", "Stracciatella Gelato", "Hazelnut Gelato", "Lemon Sorbetto",
                  "Affogato", "Tiramisu", "Cannoli", "Panna Cotta"),
    "Patisserie": ("Chocolate Eclair", "Fruit Tart", "Macaron Box", "Mille-Feuille", "Opera Cake",
                   "Paris-Brest", "Lemon Tart", "Madeleines"),
    "Bakery": ("Sourdough Loaf", "Cinnamon Bun", "Apple Pie Slice", "Carrot Cake Slice",
               "Brownie", "Oatmeal Cookie", "Cheesecake Slice", "Pecan Pie Slice"),
    "Creperie": ("Nutella Crepe", "Strawberry Crepe", "Lemon Sugar Crepe", "Banana Crepe",
                 "Churros with Chocolate", "Belgian Waffle", "Bananas Foster Crepe"),
    "Donut Shop": ("Glazed Donut", "Boston Cream Donut", "Maple Bar", "Jelly Donut",
                   "Chocolate Sprinkle Donut", "Apple Fritter", "Cruller", "Donut Holes"),
    "Frozen Yogurt": ("Original Tart Froyo", "Mango Froyo", "Berry Parfait", "Chocolate Froyo",
                      "Acai Bowl", "Frozen Yogurt Bark", "Churros with Chocolate"),
    "Cupcake Shop": ("Red Velvet Cupcake", "Vanilla Cupcake", "Chocolate Cupcake",
                     "Salted Caramel Cupcake", "Lemon Cupcake", "Cupcake Dozen", "Cake Pop"),
    "Chocolatier": ("Truffle Box", "Chocolate Bark", "Hot Cocoa", "Chocolate Dipped Strawberries",
                    "Salted Caramels", "Bonbon Selection", "Chocolate Lava Cake"),
    "Dessert Cafe": ("Tiramisu", "Churros with Chocolate", "Creme Brulee", "Chocolate Lava Cake",
                     "Tres Leches Cake", "Bread Pudding", "Key Lime Pie", "Mochi Trio"),
}

AIRLINES = ("Skyward Airlines", "Blue Harbor Air", "Summit Airways", "Coastline Air",
            "Northstar Airlines", "Meridian Air", "Prairie Wings", "Jetstream Express",
            "Redwood Air", "Lakeshore Airlines")
TICKET_CLASSES = ("Economy", "Premium Economy", "Business", "First")

CUISINES = ("American", "Italian", "Mexican", "Chinese", "Japanese", "Thai", "Indian", "French",
            "Greek", "Spanish", "Korean", "Vietnamese", "Mediterranean", "Middle Eastern",
            "Lebanese", "Turkish", "Persian", "Ethiopian", "Moroccan", "Brazilian", "Peruvian",
            "Argentinian", "Colombian", "Cuban", "Caribbean", "Jamaican", "Cajun", "Creole",
            "Southern", "Soul Food", "Barbecue", "Tex-Mex", "Hawaiian", "Filipino", "Indonesian",
            "Malaysian", "Singaporean", "Taiwanese", "Cantonese", "Szechuan", "Pakistani",
            "Bangladeshi", "Nepalese", "Afghan", "German", "Austrian", "Polish", "Russian",
            "Ukrainian", "Hungarian", "Irish", "British", "Scandinavian", "Portuguese", "Belgian",
            "Swiss", "Israeli", "Armenian", "Georgian", "Salvadoran", "Venezuelan", "Puerto Rican",
            "Seafood", "Steakhouse", "Vegetarian", "Fusion")
DISH_KINDS = ("Starter Platter", "Soup", "Salad", "Signature Plate", "Grilled Special",
              "Noodle Dish", "Rice Bowl", "Stew", "Sandwich", "Vegetable Plate", "Dessert",
              "Family Platter")
FD_DIETARY = ("vegan_options", "vegetarian_options", "gluten_free_options", "halal", "kosher",
              "dairy_free_options", "nut_free_options", "shellfish_free", "low_sodium_options")
FD_SERVICES = ("has_delivery", "has_drive_through", "has_mobile_ordering", "has_takeout",
               "accepts_reservations", "has_private_dining", "has_outdoor_seating", "has_catering")

HOTEL_BRANDS = ("Verano", "Harborline", "Cobalt Suites", "Stayfield", "Lumen House", "Grand Aster",
                "Pinecrest Inn", "Meridian Lodge", "Urbanest", "Saltwater Resorts", "Keystone Hotels",
                "Driftwood Inn", "Vantage Suites", "Copperleaf", "Northgate Hotels", "Alder & Ash")
HOTEL_FLAGS = ("has_pool", "has_gym", "has_spa", "has_valet_parking", "has_digital_key",
               "has_electric_vehicle_charging", "has_free_breakfast", "is_pet_friendly",
               "has_airport_shuttle", "has_restaurant")
ROOM_TYPES = ("King", "Queen", "Two Queens", "Double", "Twin", "Studio", "Junior Suite",
              "Executive Suite", "Family Room", "Accessible King")
ROOM_OCCUPANCY = {"King": 2, "Queen": 2, "Two Queens": 4, "Double": 2, "Twin": 2, "Studio": 3,
                  "Junior Suite": 3, "Executive Suite": 4, "Family Room": 5, "Accessible King": 2}
VIEW_TYPES = ("City", "Ocean", "Garden", "Pool", "Mountain", "Courtyard")
PRICE_TIERS = ("Standard", "Deluxe", "Premium", "Luxury")
HOTEL_PAYMENT_METHODS = ("credit_card", "debit_card", "reward_points")

VESSEL_TYPES = ("Single Kayak", "Tandem Kayak", "Canoe", "Stand-Up Paddleboard", "Sit-On-Top Kayak",
                "Pedal Kayak")
WATER_FORMS = ("{s} Lake", "{s} River", "{s} Bay", "{s} Reservoir", "{s} Creek", "{s} Marina")
KAYAK_FLAGS = ("has_life_jackets", "has_guided_tours", "has_parking", "allows_pets")

SHOW_CATEGORIES = ("Concert", "Standup Comedy", "Opera", "Ballet", "Musical", "Theater", "Jazz",
                   "Magic Show")
VENUE_TYPES = ("Theater", "Concert Hall", "Arena", "Amphitheater", "Comedy Club", "Opera House",
               "Jazz Club", "Stadium", "Music Hall", "Auditorium", "Playhouse", "Ballroom", "Cabaret",
               "Performing Arts Center", "Outdoor Pavilion", "Lounge", "Black Box Theater",
               "Bandshell")
SEAT_LOCATIONS = ("front", "middle", "back")

VEHICLE_CATEGORIES = ("car", "bike", "truck")
VEHICLE_SUBCATEGORIES = {
    "car": ("Sedan", "SUV", "Compact", "Convertible", "Minivan", "Luxury", "Coupe"),
    "bike": ("Road Bike", "Mountain Bike", "E-Bike", "Cruiser Bike", "Motorcycle", "Scooter"),
    "truck": ("Pickup Truck", "Box Truck", "Cargo Van", "Moving Truck"),
}
VEHICLE_MODELS = {
    "Sedan": (("Arden", "Vela"), ("Kestrel", "Orion S"), ("Tamura", "Cresta")),
    "SUV": (("Arden", "Ridgeway"), ("Kestrel", "Summit X"), ("Tamura", "Trailhawk")),
    "Compact": (("Arden", "Pico"), ("Brio", "City"), ("Tamura", "Zip")),
    "Convertible": (("Solano", "Breeze"), ("Kestrel", "Sol")),
    "Minivan": (("Arden", "Voyage"), ("Tamura", "Family 8")),
    "Luxury": (("Solano", "Grand Tour"), ("Valmont", "Regent")),
    "Coupe": (("Valmont", "Sprint"), ("Solano", "GT")),
    "Road Bike": (("Velocita", "Aero 2"), ("Crank & Co", "Roadster")),
    "Mountain Bike": (("Velocita", "Ridge"), ("Crank & Co", "Boulder")),
    "E-Bike": (("Voltway", "Glide"), ("Velocita", "E-Cruise")),
    "Cruiser Bike": (("Crank & Co", "Boardwalk"),),
    "Motorcycle": (("Thunderline", "Roadking"), ("Kestrel", "Moto 650")),
    "Scooter": (("Voltway", "Zoom"), ("Brio", "Vespina")),
    "Pickup Truck": (("Tamura", "Hauler"), ("Arden", "Workhorse")),
    "Box Truck": (("Ironside", "Box 16"), ("Ironside", "Box 20")),
    "Cargo Van": (("Arden", "Transit Pro"), ("Tamura", "Cargo")),
    "Moving Truck": (("Ironside", "Mover 26"),),
}
FUEL_TYPES = ("gasoline", "diesel", "electric", "hybrid", "none")
VEHICLE_TIERS = ("economy", "standard", "premium", "luxury")
VEHICLE_FLAGS = ("is_automatic", "has_gps", "has_insurance_included", "has_bluetooth",
                 "has_child_seat", "has_tow_hitch", "is_wheelchair_accessible",
                 "has_unlimited_mileage")
RENTAL_PROVIDERS = ("Roamster", "DriveNow", "Wheelhouse", "CityHop", "Openroad Rentals",
                    "PedalPoint", "Haulright", "Zipline Mobility", "Coastal Rent", "Metro Motors")

FIRST_NAMES = ("James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda",
               "David", "Elizabeth", "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica",
               "Thomas", "Karen", "Charles", "Sarah", "Christopher", "Lisa", "Daniel", "Nancy",
               "Matthew", "Betty", "Anthony", "Sandra", "Mark", "Ashley", "Steven", "Emily",
               "Andrew", "Donna", "Joshua", "Michelle", "Kevin", "Carol", "Brian", "Amanda",
               "Maria", "Luis", "Wei", "Priya", "Aisha", "Omar", "Hiroshi", "Sofia", "Diego", "Mei")
LAST_NAMES = ("Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
              "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson",
              "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "White",
              "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Walker", "Young",
              "Allen", "King", "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores", "Patel",
              "Chen", "Kim", "Okafor", "Rossi", "Novak", "Tanaka", "Haddad", "Silva", "Cohen")
EMAIL_DOMAINS = ("gmail.com", "yahoo.com", "outlook.com", "icloud.com", "proton.me")
CARD_BRANDS = ("Visa", "Mastercard", "American Express", "Discover")

# Words for synthesised business names.
NAME_ADJECTIVES = ("Golden", "Silver", "Blue", "Red", "Velvet", "Copper", "Iron", "Wild", "Lucky",
                   "Hidden", "Little", "Grand", "Old", "Rustic", "Urban", "Sunny", "Midnight",
                   "Crimson", "Emerald", "Amber", "Salty", "Smoky", "Sweet", "Happy", "Humble",
                   "Brass", "Jade", "Ivory", "Cozy", "Bright")
NAME_NOUNS = ("Fox", "Anchor", "Lantern", "Oak", "Barrel", "Crow", "Compass", "Harbor", "Mill",
              "Garden", "Stag", "Owl", "Kettle", "Spoon", "Table", "Hearth", "Sparrow", "Bear",
              "Pine", "River", "Door", "Bell", "Key", "Vine", "Stone", "Bridge", "Moon", "Rabbit",
              "Wolf", "Pearl", "Feather", "Clover", "Cedar", "Canyon", "Maple", "Tulip")

PORTS_OF_CALL = {
    "Alaska": ("Juneau", "Ketchikan", "Skagway", "Glacier Bay", "Sitka", "Icy Strait Point"),
    "Caribbean - Eastern": ("St. Thomas", "San Juan", "St. Maarten", "Tortola", "Antigua"),
    "Caribbean - Western": ("Cozumel", "Roatan", "Belize City", "Grand Cayman", "Costa Maya"),
    "Caribbean - Southern": ("Aruba", "Curacao", "Barbados", "St. Lucia", "Grenada"),
    "Bahamas": ("Nassau", "Freeport", "Bimini", "Half Moon Cay"),
    "Bermuda": ("King's Wharf", "Hamilton", "St. George's"),
    "Mexican Riviera": ("Cabo San Lucas", "Puerto Vallarta", "Mazatlan", "Ensenada"),
    "Hawaii": ("Hilo", "Kona", "Maui", "Kauai"),
    "Pacific Coastal": ("Victoria", "Astoria", "Santa Barbara", "Monterey"),
    "New England & Canada": ("Bar Harbor", "Halifax", "Saint John", "Quebec City", "Portland"),
    "Transatlantic": ("Ponta Delgada", "Southampton", "Lisbon", "Bermuda"),
    "Panama Canal": ("Cartagena", "Colon", "Puntarenas", "Gatun Lake"),
    "Mediterranean": ("Barcelona", "Rome", "Naples", "Santorini", "Dubrovnik"),
    "Northern Europe": ("Copenhagen", "Oslo", "Stockholm", "Tallinn", "Reykjavik"),
}
MEMBERSHIP_LEVELS = ("none", "silver", "gold", "platinum")
