(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   apple - item
   plate - dish
   counter_top sink_basin - receptacle
 )
 (:init
              (dish_on plate sink_basin)
              (item_on apple counter_top)
              (plate_dirty plate)
              (hands_free)
 )
 (:goal (and 
           (on apple plate)
        )
 )
)
