(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   kitchen bedroom - location
   water_bottle - item
   table_edge table_centre - spot
 )
 (:init
              (robot_at kitchen)
              (connected kitchen bedroom)
              (connected bedroom kitchen)
              (item_at water_bottle kitchen)
              (hand_empty)
              (table_spot_in table_edge bedroom)
              (table_spot_in table_centre bedroom)
              (elderly_person_in_bed bedroom)
              (spot_at_table_edge table_edge)
 )
 (:goal (and 
           (on_bedside_table water_bottle)
        )
 )
)
