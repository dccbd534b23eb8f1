(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   dining_room kitchen - room
   dining_table kitchen_bench fridge - surface
   chocolate_cake - food
 )
 (:init
              (robot_at dining_room)
              (connected dining_room kitchen)
              (connected kitchen dining_room)
              (surface_in dining_table dining_room)
              (surface_in kitchen_bench kitchen)
              (surface_in fridge kitchen)
              (food_on chocolate_cake dining_table)
              (food_in_room chocolate_cake dining_room)
              (hands_free)
              (has_door fridge)
              (door_closed fridge)
              (reachable_by_dog kitchen_bench)
              (reachable_by_dog dining_table)
              (dog_loose_in_house)
              (contains_chocolate chocolate_cake)
 )
 (:goal (and 
           (food_in_room chocolate_cake kitchen)
           (door_closed fridge)
        )
 )
)
